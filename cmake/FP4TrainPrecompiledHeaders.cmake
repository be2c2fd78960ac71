#===- FP4TrainPrecompiledHeaders.cmake - Upstream headers, parsed once ----===#
#
# Parsing LLVM and MLIR headers is most of what compiling a source here costs:
# 17 of the 19.6 s of frontend time of a typical conversion file
# (Tcgen05BlockScale.cpp, clang -ftime-trace), and the optimizer is another
# 2 s. So the headers most sources include (cmake/PrecompiledHeaders.h, all
# of them upstream and installed, none of ours) are precompiled once per set
# of compile options and reused by every target with that set: the file
# above compiles in 4.3 s instead of 17.2.
#
# A precompiled header only serves a translation unit compiled with the same
# language options (exceptions, floating-point contraction, ...), so targets
# are grouped by their COMPILE_OPTIONS; each group of at least
# FP4TRAIN_PCH_MIN_SOURCES C++ sources gets a carrier object library that
# builds the header, and its targets reuse it (REUSE_FROM). Sources with
# options of their own keep compiling without it.
#
# Sources must still include what they use: the header only makes parsing
# cheaper, and -DFP4TRAIN_PRECOMPILED_HEADERS=OFF builds without it.
#
#===----------------------------------------------------------------------===#

option(FP4TRAIN_PRECOMPILED_HEADERS
  "Precompile the LLVM/MLIR headers most sources include" ON)
set(FP4TRAIN_PCH_MIN_SOURCES 4 CACHE STRING
  "Fewest C++ sources with one set of compile options worth a precompiled header")

# The targets defined in `dir` and below it.
function(_fp4train_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    _fp4train_collect_targets(${subdir} sub)
    list(APPEND targets ${sub})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Whether `target` links MLIR, directly or through the static libraries it
# links: a translation unit that includes the header refers to MLIR's and
# LLVM's symbols, so targets without them (the numerics library and its
# tools, the C API's users, which see MLIR only behind a shared library) stay
# without it. `direct` says whether to read what the target itself links
# (LINK_LIBRARIES) or what it passes on to its users
# (INTERFACE_LINK_LIBRARIES); add_mlir_library's obj.X links what X does.
function(_fp4train_links_mlir target direct out)
  string(REGEX REPLACE "^obj\\." "" target ${target})
  string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" target ${target})
  set(property INTERFACE_LINK_LIBRARIES)
  if(direct)
    set(property LINK_LIBRARIES)
  endif()
  get_property(known GLOBAL PROPERTY _fp4train_mlir_${property}_${target} SET)
  if(NOT known)
    set(result OFF)
    if(target MATCHES "^MLIR")
      set(result ON)
    elseif(TARGET ${target})
      get_target_property(imported ${target} IMPORTED)
      get_target_property(libraries ${target} ${property})
      if(NOT imported AND libraries)
        foreach(library IN LISTS libraries)
          if(library MATCHES "^\\$<LINK_ONLY:" OR NOT library MATCHES "^\\$<|^-")
            _fp4train_links_mlir(${library} OFF linked)
            if(linked)
              set(result ON)
              break()
            endif()
          endif()
        endforeach()
      endif()
    endif()
    set_property(GLOBAL PROPERTY _fp4train_mlir_${property}_${target} ${result})
  endif()
  get_property(result GLOBAL PROPERTY _fp4train_mlir_${property}_${target})
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# The C++ sources of `target` that take the target's options unchanged.
function(_fp4train_pch_sources target out)
  get_target_property(sources ${target} SOURCES)
  get_target_property(dir ${target} SOURCE_DIR)
  set(result)
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.(cpp|cc)$" OR source MATCHES "^\\$<")
      continue()
    endif()
    get_source_file_property(options ${source}
      TARGET_DIRECTORY ${target} COMPILE_OPTIONS)
    get_source_file_property(flags ${source}
      TARGET_DIRECTORY ${target} COMPILE_FLAGS)
    if(options OR flags)
      set_source_files_properties(${source} TARGET_DIRECTORY ${target}
        PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      continue()
    endif()
    list(APPEND result ${source})
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Gives every target of the project with enough company a precompiled
# header. Called once, after every target is defined.
function(fp4train_precompile_upstream_headers)
  if(NOT FP4TRAIN_PRECOMPILED_HEADERS)
    return()
  endif()
  _fp4train_collect_targets(${PROJECT_SOURCE_DIR} targets)
  set(groups)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(imported ${target} IMPORTED)
    if(imported OR NOT type MATCHES "^(OBJECT|STATIC|SHARED|MODULE)_LIBRARY$|^EXECUTABLE$")
      continue()
    endif()
    _fp4train_links_mlir(${target} ON mlir)
    if(NOT mlir)
      continue()
    endif()
    _fp4train_pch_sources(${target} sources)
    list(LENGTH sources count)
    if(count EQUAL 0)
      continue()
    endif()
    get_target_property(options ${target} COMPILE_OPTIONS)
    if(NOT options)
      set(options)
    endif()
    string(SHA1 key "${options}")
    string(SUBSTRING ${key} 0 8 key)
    if(NOT key IN_LIST groups)
      list(APPEND groups ${key})
      set(group_${key}_options "${options}")
      set(group_${key}_count 0)
    endif()
    math(EXPR group_${key}_count "${group_${key}_count} + ${count}")
    list(APPEND group_${key}_targets ${target})
  endforeach()

  foreach(key IN LISTS groups)
    if(group_${key}_count LESS FP4TRAIN_PCH_MIN_SOURCES)
      continue()
    endif()
    set(carrier fp4train-pch-${key})
    add_library(${carrier} OBJECT ${PROJECT_SOURCE_DIR}/cmake/PrecompiledHeaders.cpp)
    target_compile_options(${carrier} PRIVATE ${group_${key}_options})
    target_precompile_headers(${carrier} PRIVATE
      ${PROJECT_SOURCE_DIR}/cmake/PrecompiledHeaders.h)
    foreach(target IN LISTS group_${key}_targets)
      target_precompile_headers(${target} REUSE_FROM ${carrier})
    endforeach()
  endforeach()
endfunction()

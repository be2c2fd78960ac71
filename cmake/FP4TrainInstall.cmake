# Install rules: headers (with the generated .inc and the .td sources),
# libraries, tools, the C API library, the Python package (python/), docs,
# and lib/cmake/FP4Train for find_package(FP4Train).
#
# The libraries go into our own FP4TrainTargets export set, CIRCT's shape:
# add_mlir_library would put them into MLIRTargets (see LLVM_INSTALL_
# TOOLCHAIN_ONLY in the top-level CMakeLists.txt).
include(CMakePackageConfigHelpers)

get_property(_fp4train_mlir_libs GLOBAL PROPERTY MLIR_EXPORTS)
set(FP4TRAIN_EXPORTED_TARGETS FP4TrainNumerics FP4TrainRuntime FP4TrainCAPI
  ${_fp4train_mlir_libs})
list(REMOVE_DUPLICATES FP4TRAIN_EXPORTED_TARGETS)
foreach(target IN LISTS FP4TRAIN_EXPORTED_TARGETS)
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:include>)
endforeach()

install(TARGETS ${FP4TRAIN_EXPORTED_TARGETS}
  EXPORT FP4TrainTargets
  ARCHIVE DESTINATION lib
  LIBRARY DESTINATION lib
  COMPONENT fp4train-libraries)
install(EXPORT FP4TrainTargets
  NAMESPACE FP4Train::
  DESTINATION lib/cmake/FP4Train
  COMPONENT fp4train-libraries)

install(TARGETS fp4-opt fp4-quant RUNTIME DESTINATION bin COMPONENT fp4train-tools)
if(TARGET fp4-train)
  install(TARGETS fp4-train RUNTIME DESTINATION bin COMPONENT fp4train-tools)
endif()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/
  DESTINATION include
  COMPONENT fp4train-headers
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/
  DESTINATION include
  COMPONENT fp4train-headers
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/
  DESTINATION share/doc/fp4train
  COMPONENT fp4train-docs
  FILES_MATCHING PATTERN "*.md")
install(DIRECTORY ${PROJECT_BINARY_DIR}/docs/
  DESTINATION share/doc/fp4train
  COMPONENT fp4train-docs
  FILES_MATCHING PATTERN "*.md"
  PATTERN "CMakeFiles" EXCLUDE)

if(IS_ABSOLUTE "${FP4TRAIN_PYTHON_INSTALL_DIR}")
  set(FP4TRAIN_PYTHON_PACKAGES_INSTALL "${FP4TRAIN_PYTHON_INSTALL_DIR}")
else()
  set(FP4TRAIN_PYTHON_PACKAGES_INSTALL
      "\${PACKAGE_PREFIX_DIR}/${FP4TRAIN_PYTHON_INSTALL_DIR}")
endif()
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/FP4TrainConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lib/cmake/FP4Train/FP4TrainConfig.cmake
  INSTALL_DESTINATION lib/cmake/FP4Train)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/lib/cmake/FP4Train/FP4TrainConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/lib/cmake/FP4Train/FP4TrainConfig.cmake
  ${PROJECT_BINARY_DIR}/lib/cmake/FP4Train/FP4TrainConfigVersion.cmake
  DESTINATION lib/cmake/FP4Train
  COMPONENT fp4train-libraries)

"""The device code that gpu-module-to-binary embeds in a module.

Shared by isa_report.py (gfx950 assembly) and ptx_report.py (sm_120a PTX):
finds every `gpu.binary @name [#gpu.object<#<target>.target<...>, ... "...">]`
of one target and returns its text with MLIR's string escapes undone.
"""
import re


def unescape(text):
    """MLIR string attributes escape bytes as \\XX (hex) plus \\\\ and \\"."""
    return re.sub(r"\\([0-9A-Fa-f]{2}|\\|\")",
                  lambda m: m.group(1) if m.group(1) in ('\\', '"')
                  else chr(int(m.group(1), 16)), text)


def binaries(module_text, target):
    """(kernel module name, device code) of every `#<target>.target` object
    (target "rocdl" or "nvvm"), in module order."""
    pattern = re.compile(
        r'gpu\.binary @(\w+)\s*\[#gpu\.object<#%s\.target<[^>]*>,[^"]*?"((?:[^"\\]|\\.)*)"'
        % re.escape(target))
    return [(name, unescape(code)) for name, code in pattern.findall(module_text)]

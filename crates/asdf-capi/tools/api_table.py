"""Writes crates/asdf-capi/API.md: every public name of libasdf's headers (functions, the
functions ASDF_DECLARE_EXTENSION declares, static inline functions, macros) and whether
asdf-rs's C API provides it (exported by libasdf_capi.so, or a static inline function or macro
of include/asdf/).

usage: python3 crates/asdf-capi/tools/api_table.py LIBASDF_INCLUDE_DIR LIBASDF_CAPI_SO
  (LIBASDF_INCLUDE_DIR: include/asdf of libasdf's source, unpacked from
   ../shared/conformance/other-impls/libasdf/; run from the workspace root)"""
import glob
import os
import re
import subprocess
import sys

libasdf, so = sys.argv[1], sys.argv[2]


def strip(s):
    s = re.sub(r"/\*.*?\*/", "", s, flags=re.S)
    return re.sub(r"//[^\n]*", "", s)


names = {}
for h in sorted(glob.glob(libasdf + "/*.h") + glob.glob(libasdf + "/core/*.h")):
    rel = os.path.relpath(h, libasdf)
    t = strip(open(h).read())
    for m in re.finditer(r"ASDF_EXPORT\s+(?:extern\s+)?[^;{(]*?\b([a-z_][a-z0-9_]*)\s*\(", t):
        names.setdefault(m.group(1), rel)
    for m in re.finditer(r"ASDF_EXPORT\s+extern\s+[a-z_0-9]+\s+([a-z_][a-z0-9_]*)\s*;", t):
        names.setdefault(m.group(1), rel)
    for m in re.finditer(r"static inline[^;{(]*?\b([a-z_][a-z0-9_]*)\s*\(", t):
        names.setdefault(m.group(1), rel)
    for m in re.finditer(r"#define\s+(asdf_[a-z0-9_]+|ASDF_[A-Z0-9_]+)\b", t):
        n = m.group(1)
        if n.endswith("_H") or n.startswith("ASDF__") or n in ("ASDF_EXPORT", "ASDF_LOCAL"):
            continue
        names.setdefault(n, rel)
    for m in re.finditer(r"ASDF_DECLARE_EXTENSION\((\w+),\s*(\w+)\)", t):
        x = m.group(1)
        for pat in ["asdf_value_as_%s", "asdf_value_is_%s", "asdf_value_of_%s", "asdf_is_%s", "asdf_get_%s",
                    "asdf_set_%s", "asdf_%s_copy", "asdf_%s_copy_into", "asdf_%s_array_copy", "asdf_%s_deinit",
                    "asdf_%s_destroy"]:
            names.setdefault(pat % x, rel)
names.pop("ASDF_DECLARE_EXTENSION", None)
nm = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True, check=True).stdout
exported = {line.split()[-1] for line in nm.splitlines()}
ours = "".join(strip(open(h).read()) for h in glob.glob("crates/asdf-capi/include/asdf/*.h")
               + glob.glob("crates/asdf-capi/include/asdf/core/*.h"))
inline = {m.group(1) for m in re.finditer(r"static inline[^;{(]*?\b([a-z_][a-z0-9_]*)\s*\(", ours)}
macros = {m.group(1) for m in re.finditer(r"#define\s+(\w+)", ours)}
rows, provided = [], 0
for n, h in sorted(names.items(), key=lambda x: (x[1], x[0])):
    if n in exported:
        st = "yes"
    elif n in inline:
        st = "yes (static inline in the header)"
    elif n in macros:
        st = "yes (macro)"
    elif n.startswith(("asdf_parser", "asdf_yaml_event", "asdf_event", "ASDF_EVENT", "ASDF_PARSER")):
        st = "not yet: the event-level parser"
    else:
        st = "not yet"
    provided += st.startswith("yes")
    rows.append(f"| `{n}` | {h} | {st} |")
added = sorted(x for x in exported if x.startswith("asdf_capi_"))
head = open("crates/asdf-capi/tools/API.head.md").read()
head = head.replace("{provided}", str(provided)).replace("{total}", str(len(names)))
head = head.replace("{added}", ", ".join(f"`{a}`" for a in added) or "none yet")
open("crates/asdf-capi/API.md", "w").write(head + "\n".join(rows) + "\n")
print(f"{provided} of {len(names)} provided")

"""Records what PyYAML's SafeLoader gives for tricky plain scalars (YAML 1.1), as
`pyyaml_scalars.tsv` (text, kind, value). Run with PyYAML installed; the output is committed
and read by tests/scalars.rs."""
import math
import yaml

CASES = """yes|Yes|YES|no|No|NO|y|n|Y|N|on|On|ON|off|Off|OFF|true|True|TRUE|false|False|FALSE|tRUE|oN
~|null|Null|NULL|nULL|nil|None
0|-0|+0|00|010|-010|0o17|08|0b101|-0b11|0b|0x1F|0X1F|0xfF|-0x10|1_000|1__0|_100|100_|1_0_0
190:20:30|-1:30|1:60|1:5|60:5|01:30|1:30.5|0:30
9223372036854775807|9223372036854775808|-9223372036854775808|-9223372036854775809|123456789012345678901234567890
1.0|1.|.5|-.5|+.5|1e3|1.0e3|1.0e+3|1.0E-3|1e+3|-1.5e-10|1_000.5|.inf|-.inf|+.inf|.Inf|.INF|.nan|.NaN|.NAN|inf|nan|-.nan|1.0e+|._5
2001-12-14|2001-12-14t21:59:43.10-05:00|2001-12-14 21:59:43.10 -5|2001-12-15T02:59:43.1Z|2001-1-1|2001-12-14 1:2:3|20011214
<<|=|- |:|abc|1 2|0.1.2|1:2:3:4|3:70|+|-|.|1e|0x|0xG|12:|1.2.3
""".strip().split("\n")

def kind(v):
    if v is None: return ("null", "")
    if isinstance(v, bool): return ("bool", str(v).lower())
    if isinstance(v, int): return ("int", str(v))
    if isinstance(v, float):
        if math.isnan(v): return ("float", "nan")
        return ("float", repr(v))
    if isinstance(v, str): return ("str", v)
    return ("timestamp", "")

with open("pyyaml_scalars.tsv", "w") as out:
    out.write(f"# PyYAML {yaml.__version__} SafeLoader (with libyaml: {yaml.__with_libyaml__})\n")
    for line in CASES:
        for text in line.split("|"):
            if text.strip() == "":
                continue
            try:
                v = yaml.load(f"v: {text}\n", Loader=yaml.CSafeLoader)["v"]
                k, val = kind(v)
            except Exception as e:
                k, val = "error", type(e).__name__
            out.write(f"{text}\t{k}\t{val}\n")

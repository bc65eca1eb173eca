"""Dumps each JSON value of a list as PyYAML's CSafeDumper (libyaml) writes it, with the
settings Python asdf uses for trees; prints the texts as a JSON list."""
import json
import sys

import yaml

assert yaml.__with_libyaml__, "PyYAML without libyaml: CSafeDumper missing"
values = json.load(open(sys.argv[1], encoding="utf-8"))
out = [
    yaml.dump(
        v,
        Dumper=yaml.CSafeDumper,
        explicit_start=True,
        explicit_end=True,
        version=(1, 1),
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=None,
    )
    for v in values
]
print(json.dumps(out))

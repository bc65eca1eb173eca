"""Fetches the wheels of the ASDF ecosystem's schema packages from PyPI (pinned, no
dependencies) and extracts every YAML file they ship (schemas, manifests, resources) into
OUTDIR/files/PACKAGE/..., for the YAML differential test (crates/asdf-yaml/tests/
libyaml_agreement.rs). Standard library only. Usage: ecosystem_yaml.py OUTDIR"""
import pathlib
import subprocess
import sys
import zipfile

PACKAGES = [
    "asdf-standard==1.5.0",
    "asdf-astropy==0.11.0",
    "gwcs==1.0.3",
    "asdf-wcs-schemas==0.5.0",
    "asdf-transform-schemas==0.6.0",
    "asdf-coordinates-schemas==0.5.1",
    "rad==1.2.1",
    "stdatamodels==6.0.0",
    "dkist==1.18.1",
    "sunpy==8.0.1",
]

out = pathlib.Path(sys.argv[1])
wheels = out / "wheels"
files = out / "files"
wheels.mkdir(parents=True, exist_ok=True)
subprocess.run(
    [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
    # The newest releases need Python 3.12; wheels are only unpacked, never installed.
    + ["--python-version", "3.12", "-d", str(wheels)]
    + PACKAGES,
    check=True,
)
count = 0
for whl in sorted(wheels.glob("*.whl")):
    package = whl.name.split("-")[0]
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            if name.endswith((".yaml", ".yml")) and ".dist-info/" not in name:
                target = files / package / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(name))
                count += 1
(out / ".ready").write_text(f"{count}\n")
print(f"{count} YAML files from {len(list(wheels.glob('*.whl')))} wheels")

"""What pyproject.toml cannot say: templates/, static/ and locale/ stay top-level in the
source tree (where `make run`, the Dockerfile and the tests expect them), and a wheel
carries them as data of the `app` package (app/templates, app/static, app/locale), where
app/settings.py finds them. Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import find_namespace_packages, setup

# Each one that is there: the Dockerfile installs (editable) before it copies them, and an
# editable install reads them from the checkout anyway. tests/app/test_wheel.py checks that
# a wheel of the whole tree holds every file.
SHARED = {
    package: folder
    for package, folder in {
        "app.templates": "templates",
        "app.static": "static",
        "app.locale": "locale",
    }.items()
    if Path(folder).is_dir()
}
# Namespace packages, so that folders of data only (probes/, migrations/data/, the demo's
# files, each folder of templates and static files) are packages whose files are shipped.
NOT_CODE = ["*__pycache__*"]

setup(
    packages=[
        *find_namespace_packages(
            include=["app*", "investigations*", "collectors*"], exclude=NOT_CODE
        ),
        *SHARED,
        *(
            f"{package}.{sub}"
            for package, folder in SHARED.items()
            for sub in find_namespace_packages(folder, exclude=NOT_CODE)
        ),
    ],
    package_dir=SHARED,
)

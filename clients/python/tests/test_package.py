"""The package as a vendor installs it: a wheel built from pyproject.toml, used from an application folder."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(HERE)

APP = """
import sys
from licence_client import LicenseClient, VerificationError
from licence_client.conformance import run_cases
assert LicenseClient.__module__ == "licence_client.client"
print(len(run_cases(sys.argv[1])))
"""


class Package(unittest.TestCase):
    def test_the_wheel_installs_and_runs_the_shared_list(self):
        with tempfile.TemporaryDirectory(prefix="licence-client-wheel-") as folder:
            source = os.path.join(folder, "source")
            shutil.copytree(PROJECT, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
            subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "--no-cache-dir", "-q", "-w",
                 os.path.join(folder, "dist"), source],
                check=True,
                capture_output=True,
            )
            (wheel,) = os.listdir(os.path.join(folder, "dist"))
            self.assertRegex(wheel, r"^licence_server_client-0\.1\.0-py3-none-any\.whl$")
            site = os.path.join(folder, "site")
            with zipfile.ZipFile(os.path.join(folder, "dist", wheel)) as archive:
                names = archive.namelist()
                self.assertFalse([n for n in names if "tests/" in n], "tests are not shipped")
                archive.extractall(site)
            app = os.path.join(folder, "app.py")
            with open(app, "w", encoding="utf-8") as handle:
                handle.write(APP)
            out = subprocess.run(
                [sys.executable, app, os.path.join(PROJECT, "..", "..", "docs", "test-vectors", "conformance.json")],
                check=True,
                capture_output=True,
                text=True,
                cwd=folder,
                env=dict(os.environ, PYTHONPATH=site),
            )
            self.assertEqual(out.stdout.strip(), "0", "no disagreement from the installed package")


if __name__ == "__main__":
    unittest.main()

"""pip/setuptools entry point of the accel Python package.

`python3 -m pip install --no-build-isolation .` (offline, with Debian's
python3-setuptools, python3-wheel, python3-dev, pybind11-dev, cmake, ninja,
g++) configures the CMake project for the installing interpreter, builds the
`accel_python_wheel` target (the module and, when GoogleTest, CLI11 and
nlohmann-json are installed, the `accel` tool) and installs the package
(component `python`) with libaccel, the plugins _C links (openreg, and
opencl where it is built) and the tool bundled
next to `_C` (rpath $ORIGIN); the console script `accel` runs the tool.
The CMake build directory is build/pip-<python version> in the checkout.

pip shows the build's output with `-v` (the README's command has it): each
step announces itself, and Ninja prints one line per file it compiles.
"""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def step(text):
    """One progress line, flushed before the subprocess writes its own."""
    print(f"accel setup.py: {text}", flush=True)


class CMakeBuild(build_ext):
    """Builds accel._C (and the libraries it needs) with the project's CMake."""

    def build_extension(self, ext):
        build_dir = ROOT / "build" / f"pip-{sys.version_info[0]}.{sys.version_info[1]}"
        package_parent = Path(self.get_ext_fullpath(ext.name)).resolve().parent.parent
        # The release preset (CMakePresets.json: Ninja, RelWithDebInfo, -O2
        # -g1): the package is compiled as the tested and measured build is,
        # and a compiler cache filled by that build (CI's, ccache) serves
        # this one, whose commands differ from it only in the build folder.
        configure = [
            "cmake", "--preset", "release", "-S", str(ROOT), "-B", str(build_dir),
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DACCEL_BUILD_TESTS=OFF", "-DACCEL_BUILD_BENCHMARKS=OFF",
            "-DACCEL_BUILD_EXAMPLES=OFF",
            "-DACCEL_PYTHON_BUNDLE_LIBS=ON", "-DACCEL_INSTALL_PYTHONDIR=.",
        ]
        step(f"configuring CMake in {build_dir}")
        subprocess.run(configure, check=True, cwd=ROOT)
        step("building the module, libaccel, the openreg and opencl plugins and the accel tool "
             "(a few minutes on two cores; one line per file)")
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "accel_python_wheel"],
                       check=True)
        step(f"installing the package into {package_parent}")
        subprocess.run(["cmake", "--install", str(build_dir), "--component", "python",
                        "--prefix", str(package_parent)], check=True)
        if not (package_parent / "accel" / Path(self.get_ext_filename(ext.name)).name).exists():
            sys.exit("setup.py: CMake did not produce accel._C (is the Python package "
                     "disabled? see the 'accelhooks: Python package' status line)")


setup(
    name="accel",
    version="0.1.0",
    description="accelhooks from Python: pluggable accelerator backends",
    packages=find_packages("python", include=["accel", "accel.*"]),
    package_dir={"": "python"},
    package_data={"": ["py.typed", "*.pyi"]},
    ext_modules=[Extension("accel._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    entry_points={"console_scripts": ["accel = accel._tool:main"]},
    python_requires=">=3.9",
    zip_safe=False,
)

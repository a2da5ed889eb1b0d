"""setup.py - compiles the project's v2 frame decoder (server/wire/, the
files web-client/client.mk and clients/python/python.mk build) and its
ctypes entry point (frame_ffi.c) into the package as
fluidclient/_fluidcodec*.so.  It is a plain shared library loaded with
ctypes, not a CPython extension module (it defines no PyInit_): setuptools'
Extension is used only to compile and link it.  The metadata is in
pyproject.toml."""
import glob
import os
import shutil

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
WIRE = os.path.relpath(os.path.join(HERE, "..", "..", "server", "wire"), HERE)
SOURCES = ["frame_ffi.c", "frame_header.c", "frame_walk.c", "frame_history.c", "frame_decoder.c", "frame_bands.c",
           "table_coder.c"]


class BuildCodec(build_ext):
    """Links the library without the Python module checks of build_ext."""

    def get_export_symbols(self, ext):
        return []


if not os.path.isfile(os.path.join(HERE, WIRE, "frame_ffi.c")):
    raise SystemExit("fluidclient: the frame decoder's sources are not at %s: install from the fluid-server source "
                     "tree (pip install ./clients/python)" % os.path.join(HERE, WIRE))

# Compiled from a copy under build/ (setuptools places object files by the
# sources' relative paths, which must not climb out of the build folder).
SRC = os.path.join("build", "fc_src")
os.makedirs(os.path.join(HERE, SRC), exist_ok=True)
for f in SOURCES + [os.path.basename(h) for h in glob.glob(os.path.join(HERE, WIRE, "*.h"))]:
    shutil.copy2(os.path.join(HERE, WIRE, f), os.path.join(HERE, SRC, f))

setup(
    ext_modules=[Extension("fluidclient._fluidcodec", [os.path.join(SRC, s) for s in SOURCES], include_dirs=[SRC],
                           define_macros=[("_POSIX_C_SOURCE", "200809L")],
                           extra_compile_args=["-std=c11", "-O3", "-fno-math-errno", "-fno-trapping-math"],
                           libraries=["m"])],
    cmdclass={"build_ext": BuildCodec},
)

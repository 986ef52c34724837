#!/usr/bin/env bash
# Unpacks the carried PoCL 3.1 / LLVM 15 (Debian 12 builds) into $1 (default /tmp/pocl-root) and prints
# the environment to `eval`. Needs only glibc >= 2.34, libstdc++ with GLIBCXX_3.4.30 (bundled libs cover the rest).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-/tmp/pocl-root}
if [ ! -e "$R/usr/lib/x86_64-linux-gnu/libpocl.so.2" ]; then
  mkdir -p "$R"; tar -C "$R" -xJf "$here/pocl-root.tar.xz"
fi
# kernels are linked by /usr/bin/ld of the host (binutils); everything else comes from the tarball
mkdir -p "$R/vendors"
echo "$R/usr/lib/x86_64-linux-gnu/libpocl.so.2" > "$R/vendors/pocl.icd"
L="$R/usr/lib/x86_64-linux-gnu:$R/lib/x86_64-linux-gnu:$R/usr/lib/llvm-15/lib"
echo "export LD_LIBRARY_PATH=$L\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}; export OCL_ICD_VENDORS=$R/vendors"

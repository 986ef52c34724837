#!/usr/bin/env bash
# The newcomer's check, run by .ci/run after the README's test line: install jpipeline's library modules with the
# README's command, then build it/prefetch (the README's pom.xml and ReadmePrefetch, pasted: DocsJavaBlocksTest and
# ReadmeLibraryTest keep them equal) against the installed artifacts with the user's own Maven, run its tests, and
# run the example through exec:exec. It fails if the example prints anything but its one line of CRCs: the JDK's
# restricted-method warning is what the pom's --enable-native-access flag prevents.
# JPIPELINE_IT_MAVEN names the Maven to build the consumer with (default: `mvn` on the PATH, else ./mvnw).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. scripts/jdk25.sh   # JAVA_HOME: a JDK 25, as the README asks of the user
maven=${JPIPELINE_IT_MAVEN:-$(command -v mvn || echo "$root/mvnw")}
if ! command -v "$maven" >/dev/null 2>&1; then
  echo "it: no Maven at $maven (JPIPELINE_IT_MAVEN names the Maven to build it/prefetch with)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "it: installing jpipeline-core and jpipeline-simt into the local Maven repository (the README's command)"
./mvnw -B -q install -Dmaven.test.skip=true -pl jpipeline-core,jpipeline-simt -am

echo "it: building it/prefetch against them with $("$maven" -v 2>/dev/null | head -n 1 | sed 's/\x1b\[[0-9;]*m//g')"
"$maven" -B -q -f it/prefetch/pom.xml verify

head -c $(( (10 << 20) + 777 )) /dev/urandom > "$work/data.bin"
"$maven" -B -q -f it/prefetch/pom.xml exec:exec -Dinput="$work/data.bin" -Dexec.outputFile="$work/out.txt"
if ! grep -Eqx 'crc32c ([0-9a-f]{8}), in parallel \1' "$work/out.txt" || [ "$(wc -l < "$work/out.txt")" -ne 1 ]; then
  echo "it: FAILED: the example should print one line of two equal CRCs and nothing else (no warning); it printed:"
  cat "$work/out.txt"
  exit 1
fi
# (Maven 3.8 prints its own sun.misc.Unsafe warning on JDK 25: the README explains it; the check above reads only
# the example's output, which exec.outputFile keeps apart.)
echo
echo "it: the README's example printed no warning, only: $(cat "$work/out.txt")"

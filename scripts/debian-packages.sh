# Sourced by scripts/test-all.sh and scripts/test-eclipse.sh (not run on its own).
#
# install_debian_packages SCRIPT: installs the Debian packages that SCRIPT names in its
# `#debian: NAME` comment lines and that are not installed yet (apt-get, through sudo
# when not root; `apt-get update` at most once per shell). With WARPSIGHT_SKIP_INSTALL
# set, a missing package is an error instead. Uses the caller's `log`.
install_debian_packages() {
  local pkg sudo
  for pkg in $(sed -n 's/^#debian: //p' "$1"); do
    if ! dpkg -s "$pkg" >/dev/null 2>&1; then
      [ -z "${WARPSIGHT_SKIP_INSTALL:-}" ] || { echo "Debian package $pkg is missing" >&2; exit 1; }
      log "Debian package $pkg"
      if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
      [ -n "${APT_UPDATED:-}" ] || { $sudo apt-get update -qq; APT_UPDATED=1; }
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$pkg" >/dev/null
    fi
  done
}

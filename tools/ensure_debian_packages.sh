#!/usr/bin/env bash
# Install the Debian packages the tests run outside Python, only those missing (a quick no-op
# when all are there): Debian's Blender 3.4 binary (the legacy-install tests) and the X server
# pieces for tests that open a real Blender window. Installing needs root, which CI has.
set -euo pipefail

# python3-numpy: the add-on imports numpy, and Debian's Blender 3.4 runs on the system Python,
# whose numpy is not a dependency of the blender package (a fresh machine lacks it).
# gcc: the native kernel's sanitizer fuzz test builds with it (AddressSanitizer's runtime).
packages=(blender python3-numpy xvfb xauth libgl1-mesa-dri gcc)

if ! command -v dpkg-query >/dev/null; then
  if [ -x /usr/bin/blender ]; then exit 0; fi
  echo "ensure_debian_packages: not a Debian system and /usr/bin/blender is missing;" \
       "install Blender 3.4 there (tests marked blender_binary need it)" >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi

if [ "$(id -u)" -ne 0 ]; then
  echo "ensure_debian_packages: missing Debian packages: ${missing[*]}" >&2
  echo "  run this as root, or install them first: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "ensure_debian_packages: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"

#!/bin/sh
# Installs Debian's chromium and chromium-driver, which the HTML report's browser test drives
# (tests/test_report_html.py). Never fails: without the browser that test skips with its reason,
# so the set-up goes on and says here why nothing was installed.
CHROMIUM=/usr/bin/chromium
DRIVER=/usr/bin/chromedriver

if [ -x "$CHROMIUM" ] && [ -x "$DRIVER" ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_browser: $CHROMIUM or $DRIVER is missing and there is no apt-get;" \
         "the browser test of the HTML report will be skipped"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install_browser: $CHROMIUM or $DRIVER is missing and this is not root;" \
         "run 'apt-get install chromium chromium-driver' as root, or the browser test" \
         "of the HTML report will be skipped"
    exit 0
fi
echo "install_browser: installing chromium and chromium-driver with apt-get"
export DEBIAN_FRONTEND=noninteractive
# A dpkg lock held by another apt run is waited for, a while, rather than failed on.
if ! apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null; then
    echo "install_browser: apt-get update failed; the browser test of the HTML report will be skipped"
    exit 0
fi
if ! apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends \
        chromium chromium-driver >/dev/null; then
    echo "install_browser: apt-get install chromium chromium-driver failed;" \
         "the browser test of the HTML report will be skipped"
    exit 0
fi
exit 0

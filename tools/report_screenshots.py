"""Screenshots of a report.html as a user opens it: the first screen, and one measurement's detail
(its figures, trend sparklines and plots) after a click on its grid cell.

Usage: python tools/report_screenshots.py REPORT_DIR OUT_DIR [--cell OP,DTYPE,SUITE]

Writes OUT_DIR/first-screen.png (the viewport, 1400 x 1000, as the page opens) and
OUT_DIR/detail-<op>-<dtype>-<suite>.png (the detail panel after the click). Headless Debian
chromium and chromedriver (tools/install_browser.sh; selenium from the project's `test` extra),
offline: the page loads nothing from the network.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def browser(width: int = 1400, height: int = 1000):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--user-data-dir={tempfile.mkdtemp(prefix='nbx-shots-')}", f"--window-size={width},{height}"):
        options.add_argument(arg)
    d = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    # the page's viewport itself at width x height (the window's size includes headless chrome's frame)
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    return d


def grid_cell(d, key: tuple[str, str, str]):
    """The grid cell of measurement (op, dtype, suite): its data-i indexes the measurements table."""
    from selenium.webdriver.common.by import By
    rows = d.execute_script("""
        return Array.from(document.querySelectorAll('#measurements > tbody > tr:not(.detail)'))
          .map(function (tr) { return [0, 1, 2].map(function (i) { return tr.cells[i].textContent; }); });""")
    for c in d.find_elements(By.CSS_SELECTOR, "#grid td[data-i]"):
        if tuple(rows[int(c.get_attribute("data-i"))]) == key:
            return c
    raise SystemExit(f"no grid cell for {' '.join(key)} in this report")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path, help="a report directory (holding report.html)")
    ap.add_argument("out", type=Path, help="where the PNG files go")
    ap.add_argument("--cell", default="exp,float32,sweep", help="OP,DTYPE,SUITE of the detail to open")
    a = ap.parse_args(argv)
    page = a.report / "report.html"
    if not page.is_file():
        ap.error(f"{page}: no report.html there")
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        ap.error(f"needs {CHROMIUM} and {CHROMEDRIVER} (tools/install_browser.sh)")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    a.out.mkdir(parents=True, exist_ok=True)
    key = tuple(a.cell.split(","))
    d = browser()
    try:
        d.get(page.resolve().as_uri())
        WebDriverWait(d, 60).until(lambda d: d.execute_script(
            "return document.querySelectorAll('#grid td[data-i]').length > 0"))
        first = a.out / "first-screen.png"
        d.save_screenshot(str(first))
        grid_cell(d, key).click()
        detail = d.find_element(By.ID, "detail")
        WebDriverWait(d, 20).until(lambda d: detail.find_elements(By.CSS_SELECTOR, "svg"))
        d.execute_script("arguments[0].scrollIntoView(true);", detail)
        shot = a.out / f"detail-{'-'.join(key)}.png"
        detail.screenshot(str(shot))
        print(f"{first}\n{shot}")
    finally:
        d.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Drives Debian's headless Chromium (through chromium-driver and python3-selenium) for the
browser tests of Tests/EntitlementHTTPTests/BrowserLoginTests.swift.

  browse.py login URL USERNAME PASSWORD STOP_PREFIX   open URL, fill the MVPD's form, sign in
  browse.py follow URL STOP_PREFIX                    open URL and let its redirects run
  browse.py activate URL CODE USERNAME PASSWORD       on a second screen: open the activation page,
                                                      enter CODE, then sign in on the MVPD's form
  browse.py pages SHOTS FILE...                       each trace's page (entitle trace view), in one
                                                      browser: step through every record with ↓ (the
                                                      first by key presses, the rest by the same key
                                                      event in the page), reading what it highlights;
                                                      then a click and End; a screenshot at the first
                                                      record, the clicked one and the last, into SHOTS

Waits until the browser's URL starts with STOP_PREFIX or the page shows #message, then prints
one JSON object: {"url": ..., "title": ..., "message": ... or null}. Exit status 0 when it
stopped for either reason, 1 when it timed out or the browser failed. `pages` prints
{"pages": [{"steps": [{"focus": SEQ, "states": {REGION: [STATE, ...]}}, ...], "divergence": [SEQ, ...],
"shots": [FILE, ...], "clicked": {...}, "end": {...}}, ...]}, one per FILE in order.
"""
import json
import os
import shutil
import sys
import tempfile

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait


def browser():
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-proxy-server", "--no-first-run", "--disable-extensions"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def message(driver):
    found = driver.find_elements(By.ID, "message")
    return found[0].text if found else None


def settle(driver, stop):
    WebDriverWait(driver, 20).until(lambda d: d.current_url.startswith(stop) or message(d) is not None)
    return {"url": driver.current_url, "title": driver.title, "message": message(driver)}


READ_PAGE = """
var focus = document.querySelector('tr.focus');
var states = {};
document.querySelectorAll('g.state.current').forEach(function (g) {
  (states[g.dataset.region] = states[g.dataset.region] || []).push(g.dataset.state);
});
return {focus: focus ? Number(focus.dataset.seq) : null, states: states};
"""

# The rest of the records, stepped through in the page with the same key the user presses (one round
# trip instead of one per record).
STEP_THROUGH = """
var read = new Function(arguments[0]);
var steps = [];
for (var i = 0; i < arguments[1]; i++) {
  document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown', bubbles: true}));
  steps.push(read());
}
return steps;
"""


def page(driver, path, shots, number):
    """Steps through a trace's page with the keyboard, reading what it highlights at each record."""
    driver.set_window_size(1280, 800)
    driver.get("file://" + path)
    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr.focus"))
    rows = driver.find_elements(By.CSS_SELECTOR, "tr[data-seq]")
    body = driver.find_element(By.TAG_NAME, "body")
    files = []

    def shot(step):
        name = "%s/page-%d-step-%d.png" % (shots, number, step)
        driver.save_screenshot(name)
        files.append(name)

    shot(1)
    steps = [driver.execute_script(READ_PAGE)]
    for _ in range(min(2, len(rows) - 1)):  # the first records by real key presses
        body.send_keys(Keys.ARROW_DOWN)
        steps.append(driver.execute_script(READ_PAGE))
    steps += driver.execute_script(STEP_THROUGH, READ_PAGE, len(rows) - len(steps))
    rows[len(rows) // 2].click()
    clicked = driver.execute_script(READ_PAGE)
    shot(len(rows) // 2 + 1)
    body.send_keys(Keys.HOME)
    body.send_keys(Keys.END)
    end = driver.execute_script(READ_PAGE)
    shot(len(rows))
    divergence = driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('tr.divergence[data-seq]'),"
        " function (row) { return Number(row.dataset.seq); });")
    return {"steps": steps, "divergence": divergence, "shots": files, "clicked": clicked, "end": end}


def main(argv):
    # Chromium and chromedriver make folders in the temporary folder that a killed browser leaves behind:
    # they go in one of this run's own, removed when it ends.
    scratch = tempfile.mkdtemp(prefix="entitle-browser-")
    os.environ["TMPDIR"] = scratch
    try:
        driver = browser()
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    try:
        if argv[1] == "pages" and len(argv) >= 4:
            print(json.dumps({"pages": [page(driver, path, argv[2], number) for number, path in enumerate(argv[3:], 1)]}))
            return 0
        if argv[1] == "login" and len(argv) == 6:
            _, _, url, username, password, stop = argv
            driver.get(url)
            WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "username"))
            driver.find_element(By.ID, "username").send_keys(username)
            driver.find_element(By.ID, "password").send_keys(password)
            driver.find_element(By.ID, "sign-in").click()
        elif argv[1] == "activate" and len(argv) == 6:
            _, _, url, code, username, password = argv
            stop = "about:never"
            driver.get(url)
            WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "code"))
            driver.find_element(By.ID, "code").send_keys(code)
            driver.find_element(By.ID, "activate").click()
            WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "username"))
            driver.find_element(By.ID, "username").send_keys(username)
            driver.find_element(By.ID, "password").send_keys(password)
            driver.find_element(By.ID, "sign-in").click()
        elif argv[1] == "follow" and len(argv) == 4:
            _, _, url, stop = argv
            driver.get(url)
        else:
            print(__doc__, file=sys.stderr)
            return 2
        print(json.dumps(settle(driver, stop)))
        return 0
    except (TimeoutException, WebDriverException) as error:
        print(json.dumps({"url": driver.current_url, "title": driver.title, "message": None, "error": str(error)[:300]}))
        return 1
    finally:
        driver.quit()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

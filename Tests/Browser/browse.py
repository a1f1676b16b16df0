#!/usr/bin/python3
"""Drives Debian's headless Chromium (through chromium-driver and python3-selenium) for the
browser tests of Tests/EntitlementHTTPTests/BrowserLoginTests.swift.

  browse.py login URL USERNAME PASSWORD STOP_PREFIX   open URL, fill the MVPD's form, sign in
  browse.py follow URL STOP_PREFIX                    open URL and let its redirects run
  browse.py activate URL CODE USERNAME PASSWORD       on a second screen: open the activation page,
                                                      enter CODE, then sign in on the MVPD's form

Waits until the browser's URL starts with STOP_PREFIX or the page shows #message, then prints
one JSON object: {"url": ..., "title": ..., "message": ... or null}. Exit status 0 when it
stopped for either reason, 1 when it timed out or the browser failed.
"""
import json
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
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


def main(argv):
    driver = browser()
    try:
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


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""`entitle serve` against Adobe's own OpenAPI files: a full walk through REST API V2 (registration,
tokens, configuration, sessions with and without an MVPD, their status and resumption, a browser login,
profiles, decisions, logout) and the refusals a client meets (no token, a wrong method, a bad body),
each answer validated with openapi-core against adobe-openapi/restApiV2.json and dcrApi.json.

Usage: check_contract.py http://127.0.0.1:PORT   (exit 0: every answer conforms, but for the
disagreements listed in KNOWN; 1: the departures are printed).
       check_contract.py --requests FILE          (the engine client's requests, recorded by the
swift test ClientContractRecordingTests with ENTITLE_CONTRACT_REQUESTS=FILE, validated the same way).
"""
import base64
import copy
import json
import re
import sys
from html import unescape
from pathlib import Path
from urllib.parse import urljoin, urlparse

import requests
from openapi_core import OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

HERE = Path(__file__).parent / "adobe-openapi"

# Where Adobe's files disagree with Adobe's own pages, the pages win (adobe-openapi/README.md). Each
# entry: (operation path pattern, a regular expression the validation error's text matches, why).
KNOWN = [
    (r".*", r"message.*is not of type 'object'|'[^']*' is not of type 'object'.*message",
     "error `message` is typed as an object; Adobe's pages (and the service) send a string"),
    (r"/profiles", r"is not of type 'object'",
     "profile attribute `value` is typed as an object; the pages show strings and numbers"),
    (r"/profiles/sso/", r"Unknown response http status: 201",
     "the partner profile lists 200; the pages say 201"),
    (r"/client/token", r"Unknown response http status: 201|Missing required query parameter",
     "DCR's token endpoint: the file lists 200 and query parameters; the pages send a form body and get 201"),
    (r"/client/register", r"Unknown response http status: 201",
     "DCR registration: the file lists 200; the pages (and the service) answer 201"),
    (r".*", r"Unknown response http status: 429", "429 (throttling) is not declared; the pages document it"),
    (r"/decisions/", r"Unknown response http status: 403", "the decisions' 403 is not declared; the pages document it"),
    (r".*", r"Unknown response http status: 405", "405 is documented on Adobe's pages for every operation"),
]


def spec(name, base):
    document = json.loads((HERE / name).read_text())
    document["servers"] = [{"url": base + ("/api/v2" if name == "restApiV2.json" else "/o")}]
    return OpenAPI.from_dict(document)


class Walk:
    def __init__(self, base):
        self.base = base
        self.v2 = spec("restApiV2.json", base)
        self.dcr = spec("dcrApi.json", base)
        self.departures = []
        self.known_seen = set()
        self.checked = 0
        self.session = requests.Session()
        self.token = None
        self.device = base64.b64encode(b"contract-device").decode()
        info = {"model": "AppleTV", "version": "6", "osName": "tvOS", "osVersion": "18.1", "connectionType": "WiFi"}
        self.info = base64.b64encode(json.dumps(info).encode()).decode()

    def headers(self, device=True, **extra):
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if device:
            headers["AP-Device-Identifier"] = "fingerprint " + self.device
            headers["X-Device-Info"] = self.info
        headers.update(extra)
        return headers

    def call(self, method, path, expect=None, api="v2", **kwargs):
        """Sends a request, validates its answer against the contract, returns the answer."""
        response = self.session.request(method, self.base + path, allow_redirects=False, timeout=10, **kwargs)
        self.checked += 1
        if response.status_code == 405:
            # The contract has no operation for this method, so nothing to validate against: the pages
            # document 405 with the error JSON; RFC 9110 asks for `Allow`.
            body = response.json() if response.headers.get("Content-Type", "").startswith("application/json") else None
            if not response.headers.get("Allow") or not isinstance(body, dict) or body.get("status") != 405:
                self.departures.append(f"{method} {path} → 405 without Allow or V2's error JSON: {response.text[:200]}")
            if expect is not None and expect != 405:
                self.departures.append(f"{method} {path}: expected HTTP {expect}, got 405")
            return response
        openapi = self.v2 if api == "v2" else self.dcr
        try:
            openapi.validate_response(RequestsOpenAPIRequest(response.request), RequestsOpenAPIResponse(response))
        except Exception as error:  # openapi-core raises a family of validation errors
            text = str(error) + " " + " ".join(str(e) for e in getattr(error, "__cause__", None).schema_errors) \
                if getattr(getattr(error, "__cause__", None), "schema_errors", None) else str(error)
            known = [why for pattern, match, why in KNOWN if re.search(pattern, path) and re.search(match, text)]
            if known:
                self.known_seen.add(known[0])
            else:
                self.departures.append(f"{method} {path} → {response.status_code}: {text[:400]}")
        if expect is not None and response.status_code != expect:
            self.departures.append(f"{method} {path}: expected HTTP {expect}, got {response.status_code}: {response.text[:200]}")
        return response

    def login(self, url, username, password):
        """A browser: the authenticate URL's redirects, the MVPD's form, back to the redirect URL."""
        page = self.session.get(url, allow_redirects=False, timeout=10)
        for _ in range(10):
            if page.status_code in (301, 302, 303, 307, 308):
                location = urljoin(page.url, page.headers["Location"])
                if urlparse(location).scheme not in ("http", "https"):
                    return location
                page = self.session.get(location, allow_redirects=False, timeout=10)
                continue
            form = re.search(r'<form method="post" action="([^"]*)"', page.text)
            if not form:
                raise SystemExit(f"no login form at {page.url}: {page.status_code}")
            fields = dict(re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', page.text))
            fields = {unescape(k): unescape(v) for k, v in fields.items()}
            fields.update(username=username, password=password)
            page = self.session.post(urljoin(page.url, unescape(form.group(1))), data=fields, allow_redirects=False, timeout=10)
        raise SystemExit("the login did not come back")

    def run(self):
        sp = "sim-requestor"
        # Registration and an access token (the token's parameters as a form, as Adobe's page sends them).
        registered = self.call("POST", "/o/client/register", api="dcr", expect=201,
                               headers={"Content-Type": "application/json", "X-Device-Info": self.info},
                               data=json.dumps({"software_statement": "sim.software-statement.v2"}))
        client = registered.json()
        issued = self.call("POST", "/o/client/token", api="dcr", expect=201,
                           data={"client_id": client["client_id"], "client_secret": client["client_secret"],
                                 "grant_type": "client_credentials"})
        self.token = issued.json()["access_token"]
        self.call("GET", f"/api/v2/{sp}/configuration", expect=200, headers=self.headers())
        # A first-screen login through the browser.
        form = {"mvpd": "acme-cable", "domainName": "app.example", "redirectUrl": "adobepass://ios.app"}
        session = self.call("POST", f"/api/v2/{sp}/sessions", expect=200, headers=self.headers(), data=form).json()
        code = session["code"]
        self.call("GET", f"/api/v2/{sp}/sessions/{code}", expect=200, headers=self.headers(device=False))
        self.login(session["url"], "alice", "wonderland")
        self.call("GET", f"/api/v2/{sp}/profiles/code/{code}", expect=200, headers=self.headers(device=False))
        self.call("GET", f"/api/v2/{sp}/profiles", expect=200, headers=self.headers())
        self.call("GET", f"/api/v2/{sp}/profiles/acme-cable", expect=200, headers=self.headers())
        body = json.dumps({"resources": ["news-channel"]})
        self.call("POST", f"/api/v2/{sp}/decisions/authorize/acme-cable", expect=200,
                  headers=self.headers(**{"Content-Type": "application/json"}), data=body)
        self.call("POST", f"/api/v2/{sp}/decisions/preauthorize/acme-cable", expect=200,
                  headers=self.headers(**{"Content-Type": "application/json"}),
                  data=json.dumps({"resources": ["news-channel", "sports-live"]}))
        self.call("POST", f"/api/v2/{sp}/decisions/authorize/acme-cable", expect=200,
                  headers=self.headers(**{"Content-Type": "application/json"}),
                  data=json.dumps({"resources": ["news-channel", "movies-hd"]}))
        self.call("GET", f"/api/v2/{sp}/logout/acme-cable", expect=200, headers=self.headers(),
                  params={"redirectUrl": "adobepass://ios.app"})
        # A second screen: a session without an MVPD, its status, its resumption.
        resume = self.call("POST", f"/api/v2/{sp}/sessions", expect=200, headers=self.headers(),
                           data={"domainName": "tv.example"}).json()
        self.call("GET", f"/api/v2/{sp}/sessions/{resume['code']}", expect=200, headers=self.headers(device=False))
        self.call("POST", f"/api/v2/{sp}/sessions/{resume['code']}", expect=200, headers=self.headers(device=False),
                  data={"mvpd": "acme-cable"})
        self.call("POST", f"/api/v2/{sp}/sessions/{resume['code']}", expect=200, headers=self.headers(device=False),
                  data={"redirectUrl": "https://phone.example/done"})
        # Apple's single sign-on: the partner session (its SAML request for the partner framework).
        partner = self.call("POST", f"/api/v2/{sp}/sessions/sso/apple", expect=200, headers=self.headers(),
                            data={"domainName": "app.example", "redirectUrl": "adobepass://ios.app"}).json()
        if partner.get("actionName") != "partner_profile" or "authenticationRequest" not in partner:
            self.departures.append(f"the partner session is not a partner_profile with an authenticationRequest: {partner}")
        # Refusals: a wrong code, no token, a wrong method, a bad body.
        self.call("GET", f"/api/v2/{sp}/sessions/NOSUCH99", expect=400, headers=self.headers(device=False))
        self.call("GET", f"/api/v2/{sp}/profiles/code/NOSUCH99", expect=400, headers=self.headers(device=False))
        saved, self.token = self.token, None
        self.call("GET", f"/api/v2/{sp}/profiles", expect=401, headers=self.headers())
        self.call("POST", f"/api/v2/{sp}/decisions/authorize/acme-cable", expect=401,
                  headers=self.headers(**{"Content-Type": "application/json"}), data="{not json")
        self.token = saved
        self.call("GET", f"/api/v2/{sp}/sessions", expect=405, headers=self.headers())
        self.call("POST", f"/api/v2/{sp}/decisions/authorize/acme-cable", expect=400,
                  headers=self.headers(**{"Content-Type": "application/json"}), data=json.dumps({"resources": []}))
        self.call("POST", f"/api/v2/{sp}/sessions", expect=400, headers=self.headers(**{"Content-Type": "application/json"}),
                  data="{}")
        self.call("GET", f"/api/v2/nobody/configuration", expect=400, headers=self.headers())
        self.forbidden_bodies(sp)

    def forbidden_bodies(self, sp):
        """Every operation that takes a body, fed bodies Adobe's contract forbids: each is confirmed
        forbidden by openapi-core's request validation, and the service must answer 400."""
        form, json_type = "application/x-www-form-urlencoded", "application/json"
        code = self.session.post(self.base + f"/api/v2/{sp}/sessions", headers=self.headers(),
                                 data={"domainName": "tv.example"}, timeout=10).json()["code"]
        cases = []
        for path, fields in [(f"/api/v2/{sp}/sessions", "mvpd=acme-cable&domainName=a.example&redirectUrl=x%3A%2F%2Fy"),
                             (f"/api/v2/{sp}/sessions/{code}", "mvpd=acme-cable"),
                             (f"/api/v2/{sp}/sessions/sso/apple", "domainName=a.example&redirectUrl=x%3A%2F%2Fy"),
                             (f"/api/v2/{sp}/profiles/sso/apple", "SAMLResponse=PHNhbWw%2B")]:
            cases += [(path, json_type, json.dumps(dict(p.split("=") for p in fields.split("&")))),
                      (path, "text/plain", fields)]
        cases += [
            (f"/api/v2/{sp}/sessions/sso/apple", form, "redirectUrl=x%3A%2F%2Fy"),
            (f"/api/v2/{sp}/sessions/sso/apple", form, "domainName=a.example"),
            (f"/api/v2/{sp}/profiles/sso/apple", form, "samlresponse=PHNhbWw%2B"),
        ]
        for kind in ("authorize", "preauthorize"):
            path = f"/api/v2/{sp}/decisions/{kind}/acme-cable"
            cases += [(path, json_type, json.dumps({"resources": "news-channel"})),
                      (path, json_type, json.dumps({"resources": [1, 2]})),
                      (path, json_type, json.dumps({"resources": ["news-channel", None]})),
                      (path, json_type, json.dumps(["news-channel"])),
                      (path, form, "resources=news-channel")]
        for path, content_type, body in cases:
            prepared = requests.Request("POST", self.base + path, headers=self.headers(**{"Content-Type": content_type}),
                                        data=body).prepare()
            try:
                self.v2.validate_request(RequestsOpenAPIRequest(prepared))
                self.departures.append(f"checker: POST {path} with {content_type} {body[:60]} is not forbidden by the contract")
            except Exception:
                pass
            self.call("POST", path, expect=400, headers=self.headers(**{"Content-Type": content_type}), data=body)
        # A field given twice (openapi-core's form reader keeps one, but each field's type is a string,
        # not a list) and a form that does not decode are refused too.
        for path, body in [(f"/api/v2/{sp}/sessions", "mvpd=acme-cable&mvpd=bluesky-tv"),
                           (f"/api/v2/{sp}/sessions/{code}", "mvpd=acme-cable&mvpd=bluesky-tv"),
                           (f"/api/v2/{sp}/sessions/sso/apple", "domainName=a&domainName=b&redirectUrl=x"),
                           (f"/api/v2/{sp}/profiles/sso/apple", "SAMLResponse=a&SAMLResponse=b"),
                           (f"/api/v2/{sp}/sessions", "mvpd=acme%2"),
                           (f"/api/v2/{sp}/sessions", "mvpd=%FF%FE")]:
            self.call("POST", path, expect=400, headers=self.headers(**{"Content-Type": form}), data=body)


def check_requests(path):
    """Validates requests the engine's client sent (JSON lines: operation, method, url, headers, base64 body)."""
    specs = {}
    departures = []
    count = 0
    for line in Path(path).read_text().splitlines():
        record = json.loads(line)
        count += 1
        parts = urlparse(record["url"])
        base = f"{parts.scheme}://{parts.netloc}"
        name = "dcrApi.json" if parts.path.startswith("/o/") else "restApiV2.json"
        if (name, base) not in specs:
            specs[(name, base)] = spec(name, base)
        prepared = requests.Request(
            record["method"], record["url"], headers=record["headers"], data=base64.b64decode(record["body"]) or None
        ).prepare()
        try:
            specs[(name, base)].validate_request(RequestsOpenAPIRequest(prepared))
        except Exception as error:
            cause = getattr(error, "__cause__", None)
            text = str(error) + (" " + " ".join(str(e) for e in cause.schema_errors) if getattr(cause, "schema_errors", None) else "")
            known = [why for pattern, match, why in KNOWN_REQUESTS if re.search(pattern, parts.path) and re.search(match, text)]
            if known:
                print(f"known disagreement (Adobe's pages win): {known[0]}")
            else:
                departures.append(f"{record['operation']}: {record['method']} {parts.path}: {text[:400]}")
    if departures:
        print(f"contract: {len(departures)} of {count} client requests depart from the contract")
        for departure in departures:
            print("  " + departure)
        raise SystemExit(1)
    print(f"contract: {count} client requests conform to Adobe's OpenAPI files")


# Requests: where the files disagree with Adobe's pages (adobe-openapi/README.md).
KNOWN_REQUESTS = [
    (r"/client/token", r"Missing required query parameter",
     "DCR's token parameters are declared as query parameters; Adobe's page sends them as a form body"),
    (r"/client/register", r"'redirect_uri' is a required property",
     "DCR registration marks `redirect_uri` required; Adobe's page makes it optional (server-to-server has none)"),
]


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--requests":
        return check_requests(sys.argv[2])
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    walk = Walk(sys.argv[1].rstrip("/"))
    walk.run()
    for why in sorted(walk.known_seen):
        print(f"known disagreement (Adobe's pages win): {why}")
    if walk.departures:
        print(f"contract: {len(walk.departures)} departures in {walk.checked} answers")
        for departure in walk.departures:
            print("  " + departure)
        raise SystemExit(1)
    print(f"contract: {walk.checked} answers conform to Adobe's OpenAPI files (but for the known disagreements above)")


if __name__ == "__main__":
    main()

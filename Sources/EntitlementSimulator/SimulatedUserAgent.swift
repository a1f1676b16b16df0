import EntitlementEngine
import EntitlementSupport

/// Plays the app's web view: opens the `navigateToUrl` URL, fills in the login form, follows
/// redirects and stops at the first URL that is not `http(s)` — the app's custom redirect URL,
/// which the caller then passes to `handleExternalURL`.
public struct SimulatedUserAgent: Sendable {
    /// How a browsing session ended.
    public enum Outcome: Sendable, Hashable {
        /// The chain reached the app's custom URL.
        case reachedApp(String)
        /// The browser stopped on a page (for example the login page showing "Invalid password").
        case stoppedAt(WebPage)
        /// The web answered with an error.
        case failed(status: Int, message: String)
    }

    /// Every URL visited, in order, and how it ended.
    public struct Visit: Sendable, Hashable {
        /// The URLs loaded or redirected to, in order.
        public var hops: [String]
        /// How it ended.
        public var outcome: Outcome

        /// The app URL reached, if any.
        public var appURL: String? {
            if case .reachedApp(let url) = outcome { return url }
            return nil
        }
    }

    /// The simulator whose pages are loaded.
    package let simulator: Simulator

    /// The most redirects followed before giving up.
    package static let redirectLimit = 20

    /// Opens `url` and signs in with `username` and `password` when the login form appears.
    public func logIn(at url: String, username: String, password: String) async -> Visit {
        await browse(url) { form in form.hiddenFields.merging(["username": username, "password": password]) { $1 } }
    }

    /// Opens `url` and presses "Cancel" on the MVPD's login page (the MVPD redirects with `error=`).
    public func cancelLogin(at url: String) async -> Visit {
        await browse(url) { form in form.hiddenFields.merging(["action": "cancel"]) { $1 } }
    }

    /// On a second device: opens the activation page with `code` and signs `username` in at the
    /// code's MVPD (cookbook E). The visit ends on the "Signed in" page.
    public func activate(code: String, username: String, password: String) async -> Visit {
        let url = PercentEncoding.url(simulator.activationURL, query: [("code", code)])
        return await logIn(at: url, username: username, password: password)
    }

    /// Opens `url` and follows redirects without interacting (the logout chain).
    public func follow(_ url: String) async -> Visit { await browse(url, fill: nil) }

    private func browse(_ start: String, fill: (@Sendable (LoginForm) -> [String: String])?) async -> Visit {
        var hops = [start]
        var request = WebRequest(url: start)
        var submitted = false
        for _ in 0..<Self.redirectLimit {
            switch await simulator.load(request) {
            case .redirect(let location):
                hops.append(location)
                guard location.hasPrefix("https://") || location.hasPrefix("http://") else {
                    return Visit(hops: hops, outcome: .reachedApp(location))
                }
                request = WebRequest(url: location)
            case .page(let page):
                guard let form = page.form, let fill, !submitted else { return Visit(hops: hops, outcome: .stoppedAt(page)) }
                submitted = true
                hops.append("POST \(form.action)")
                request = WebRequest(method: .post, url: form.action, form: fill(form))
            case .error(let status, let message):
                return Visit(hops: hops, outcome: .failed(status: status, message: message))
            }
        }
        return Visit(hops: hops, outcome: .failed(status: 310, message: "Too many redirects."))
    }
}

/// A request the simulated user agent sends to the simulated web (service provider and MVPD pages).
package struct WebRequest: Sendable, Hashable {
    /// `GET` or `POST`.
    package enum Method: String, Sendable, Hashable {
        /// Load a page.
        case get = "GET"
        /// Submit a form.
        case post = "POST"
    }

    /// The method.
    package var method: Method
    /// The URL.
    package var url: String
    /// Form fields for `POST`.
    package var form: [String: String]

    /// Creates a request.
    package init(method: Method = .get, url: String, form: [String: String] = [:]) {
        self.method = method
        self.url = url
        self.form = form
    }
}

/// What the simulated web answers.
package enum WebResponse: Sendable, Hashable {
    /// HTTP 302 to `location`.
    case redirect(String)
    /// A page (possibly with a login form).
    case page(WebPage)
    /// An error page with an HTTP status.
    case error(status: Int, message: String)
}

/// A page: the MVPD's login page, or the same page with an error message.
public struct WebPage: Sendable, Hashable {
    /// The page's URL.
    public var url: String
    /// Its title.
    public var title: String
    /// A message shown on the page (for example "Invalid username or password.").
    public var message: String?
    /// The login form, if the page has one.
    package var form: LoginForm?
}

/// The MVPD login form.
package struct LoginForm: Sendable, Hashable {
    /// Where the form posts.
    package var action: String
    /// Hidden fields the browser sends back.
    package var hiddenFields: [String: String]
}

import EntitlementSimulator
import EntitlementSupport

/// The simulator's pages as HTML a real browser shows and submits: stable element ids (`username`,
/// `password`, `sign-in`, `cancel`, `message`, `code`) so browser tests can drive them.
enum WebPageHTML {
    static func page(_ page: WebPage) -> String {
        var body = "<h1>\(page.title.markupEscaped)</h1>\n"
        if let message = page.message { body += "<p id=\"message\" class=\"message\">\(message.markupEscaped)</p>\n" }
        if let form = page.form {
            body += "<form method=\"post\" action=\"\(form.action.markupEscaped)\">\n"
            for (name, value) in form.hiddenFields.sorted(by: { $0.key < $1.key }) {
                body += "<input type=\"hidden\" name=\"\(name.markupEscaped)\" value=\"\(value.markupEscaped)\">\n"
            }
            body += """
                <label for="username">User name</label> <input id="username" name="username" autocomplete="username"><br>
                <label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password"><br>
                <button id="sign-in" type="submit" name="action" value="sign-in">Sign in</button>
                <button id="cancel" type="submit" name="action" value="cancel" formnovalidate>Cancel</button>
                </form>

                """
        }
        return document(page.title, body)
    }

    static func error(status: Int, message: String) -> String {
        document("Error \(status)", "<h1>Something went wrong</h1>\n<p id=\"message\" class=\"message\">\(message.markupEscaped)</p>\n")
    }

    /// The second screen's code entry (`GET /activate`), submitting to the same page.
    static func activation(action: String) -> String {
        document(
            "Activate your device",
            """
            <h1>Activate your device</h1>
            <p>Enter the code your TV shows.</p>
            <form method="get" action="\(action.markupEscaped)">
            <label for="code">Code</label> <input id="code" name="code" autocomplete="off" autocapitalize="characters">
            <button id="activate" type="submit">Continue</button>
            </form>

            """)
    }

    /// The server's front page: the world's users and what to try.
    static func index(_ world: SimulatedWorld, baseURL: String) -> String {
        var rows = ""
        for user in world.users {
            rows += "<tr><td>\(user.username.markupEscaped)</td><td>\(user.password.markupEscaped)</td><td>\(user.mvpdID.markupEscaped)</td></tr>\n"
        }
        return document(
            "Entitlement simulator",
            """
            <h1>Entitlement simulator</h1>
            <p>REST API V2 at <code>\(baseURL.markupEscaped)/api/v2/</code>, client registration at <code>\(baseURL.markupEscaped)/o/client/</code>.
            Second screen: <a href="/activate">/activate</a>.</p>
            <table><tr><th>User</th><th>Password</th><th>MVPD</th></tr>
            \(rows)</table>

            """)
    }

    private static func document(_ title: String, _ body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>\(title.markupEscaped)</title>
        <meta name="viewport" content="width=device-width, initial-scale=1"></head>
        <body>
        \(body)</body></html>

        """
    }

}

/// Text made safe inside XML 1.0 and HTML elements and quoted attribute values: the package's one
/// escaper (the simulator's pages and XML answers, the fuzzers' writers, JUnit reports).
package enum MarkupEscaping {
    /// `text` with `& < > " '` as references (`&#39;`, which XML and every HTML read alike), tabs and
    /// line breaks as character references (an attribute value keeps them), and the characters XML
    /// cannot hold (the other C0 controls, U+FFFE, U+FFFF) replaced by U+FFFD.
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t": out += "&#9;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case _ where scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value): out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

extension String {
    /// The text made safe inside markup (``MarkupEscaping/escape(_:)``).
    package var markupEscaped: String { MarkupEscaping.escape(self) }
}

/// One token of a script line.
struct Token: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case word(String)
        case string(String)
        case reference(String)
        case capture(String)
        case regex(String)
        case star
        case ellipsis
        case open
        case close
        case comma
        case bang
    }

    let kind: Kind
    /// 1-based column of the token's first character.
    let column: Int
}

/// Splits one line into tokens. Words are runs of anything but spaces, brackets, commas and
/// quotes; strings are double-quoted with `\"`, `\\`, `\n` and `\t` escapes.
enum ScenarioLexer {
    static func tokens(_ line: Substring, startColumn: Int) throws(ScenarioParseError.Reason) -> [Token] {
        let characters = Array(line)
        var tokens: [Token] = []
        var index = 0
        func column() -> Int { startColumn + index }
        while index < characters.count {
            let character = characters[index]
            let start = column()
            switch character {
            case " ", "\t":
                index += 1
            case "[":
                tokens.append(Token(kind: .open, column: start))
                index += 1
            case "]":
                tokens.append(Token(kind: .close, column: start))
                index += 1
            case ",":
                tokens.append(Token(kind: .comma, column: start))
                index += 1
            case "!":
                tokens.append(Token(kind: .bang, column: start))
                index += 1
            case "\"":
                index += 1
                tokens.append(Token(kind: .string(try quoted(characters, &index, start: start)), column: start))
            case "~":
                index += 1
                guard index < characters.count, characters[index] == "\"" else {
                    throw .at(start, "'~' must be followed by a quoted regular expression")
                }
                index += 1
                let pattern = try quoted(characters, &index, start: start, raw: true)
                do {
                    _ = try Regex(pattern)
                } catch {
                    throw .at(start + 1, "invalid regular expression: \(error)")
                }
                tokens.append(Token(kind: .regex(pattern), column: start))
            case "$":
                index += 1
                var name = ""
                while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" {
                    name.append(characters[index])
                    index += 1
                }
                guard let first = name.first, first.isLetter else { throw .at(start, "'$' must be followed by a name") }
                if index < characters.count, characters[index] == "=" {
                    index += 1
                    tokens.append(Token(kind: .capture(name), column: start))
                } else {
                    tokens.append(Token(kind: .reference(name), column: start))
                }
            default:
                var word = ""
                while index < characters.count, !" \t[],\"$".contains(characters[index]) {
                    word.append(characters[index])
                    index += 1
                }
                tokens.append(Token(kind: try classify(word, column: start), column: start))
            }
        }
        return tokens
    }

    /// Reads a string up to its closing quote. In `raw` strings (regular expressions) only `\"`
    /// is unescaped; every other backslash stays for the regex engine.
    private static func quoted(_ characters: [Character], _ index: inout Int, start: Int, raw: Bool = false)
        throws(ScenarioParseError.Reason) -> String
    {
        var text = ""
        while index < characters.count {
            let character = characters[index]
            index += 1
            switch character {
            case "\"": return text
            case "\\":
                guard index < characters.count else { break }
                let escaped = characters[index]
                index += 1
                if raw {
                    if escaped != "\"" { text.append("\\") }
                    text.append(escaped)
                    continue
                }
                switch escaped {
                case "\"": text.append("\"")
                case "\\": text.append("\\")
                case "n": text.append("\n")
                case "t": text.append("\t")
                default: throw .at(start, "unknown escape '\\\(escaped)' in string")
                }
            default: text.append(character)
            }
        }
        throw .at(start, "unterminated string")
    }

    private static func classify(_ word: String, column: Int) throws(ScenarioParseError.Reason) -> Token.Kind {
        switch word {
        case "*": .star
        case "...": .ellipsis
        default: .word(word)
        }
    }
}

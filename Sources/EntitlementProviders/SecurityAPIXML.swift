/// The small XML Pugpig's Security API answers with (`<token>…</token>`,
/// `<error status="notrecognised" message="…"/>`, `<subscription state="active"><issue id="…"/></subscription>`),
/// read into elements. Total: any bytes give an element or a typed ``Failure`` — bounded in size and
/// depth, no DTDs, no external anything; the five predefined entities and numeric character references.
package enum SecurityAPIXML {
    /// One element: its name, attributes, child elements and text.
    package struct Element: Sendable, Hashable {
        /// The name.
        package var name: String
        /// The attributes, by name (the first of a repeated name wins).
        package var attributes: [String: String]
        /// The child elements, in order.
        package var children: [Element]
        /// The text directly inside it, entities decoded, trimmed.
        package var text: String

        /// The first child called `name`.
        package func child(_ name: String) -> Element? { children.first { $0.name == name } }
    }

    /// Why an answer is not XML this reader takes.
    package struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, and where.
        package var description: String
    }

    /// The largest answer read.
    package static let sizeLimit = 256 * 1024
    /// The deepest nesting read.
    package static let depthLimit = 16

    /// The document's root element.
    package static func parse(_ bytes: [UInt8]) throws(Failure) -> Element {
        guard bytes.count <= sizeLimit else { throw Failure(description: "the answer is larger than \(sizeLimit) bytes") }
        var reader = Reader(bytes: bytes)
        reader.skipProlog()
        let root = try reader.element(depth: 0)
        reader.skipMisc()
        guard reader.atEnd else { throw reader.failure("content after the root element") }
        return root
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index >= bytes.count }

        func failure(_ what: String) -> Failure { Failure(description: "\(what) at byte \(index)") }

        func peek(_ offset: Int = 0) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }

        func starts(with text: String) -> Bool {
            let utf8 = Array(text.utf8)
            return index + utf8.count <= bytes.count && Array(bytes[index..<(index + utf8.count)]) == utf8
        }

        mutating func skipSpace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        /// Skips `<?…?>` and `<!--…-->` (anything else with `<!`, a DTD, is left to fail).
        mutating func skipMisc() {
            while true {
                skipSpace()
                if starts(with: "<?") {
                    skip(past: "?>")
                } else if starts(with: "<!--") {
                    skip(past: "-->")
                } else {
                    return
                }
            }
        }

        mutating func skipProlog() {
            if starts(with: "\u{FEFF}") { index += 3 }
            skipMisc()
        }

        mutating func skip(past end: String) {
            while !atEnd, !starts(with: end) { index += 1 }
            index = min(bytes.count, index + end.utf8.count)
        }

        mutating func name() throws(Failure) -> String {
            let start = index
            while let byte = peek(), Self.isNameByte(byte) { index += 1 }
            guard index > start, index - start <= 128 else { throw failure("expected a name") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        static func isNameByte(_ byte: UInt8) -> Bool {
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x5F || byte == 0x2D || byte == 0x2E || byte == 0x3A || byte >= 0x80
        }

        mutating func element(depth: Int) throws(Failure) -> Element {
            guard depth < SecurityAPIXML.depthLimit else { throw failure("nested deeper than \(SecurityAPIXML.depthLimit)") }
            guard peek() == 0x3C else { throw failure("expected '<'") }
            index += 1
            let name = try self.name()
            var attributes: [String: String] = [:]
            while true {
                skipSpace()
                guard let byte = peek() else { throw failure("the document ends inside <\(name)>") }
                if byte == 0x2F {  // "/>"
                    guard peek(1) == 0x3E else { throw failure("expected '/>'") }
                    index += 2
                    return Element(name: name, attributes: attributes, children: [], text: "")
                }
                if byte == 0x3E {
                    index += 1
                    break
                }
                let attribute = try self.name()
                skipSpace()
                guard peek() == 0x3D else { throw failure("expected '=' after \(attribute)") }
                index += 1
                skipSpace()
                guard let quote = peek(), quote == 0x22 || quote == 0x27 else { throw failure("expected a quoted value") }
                index += 1
                let start = index
                while let byte = peek(), byte != quote {
                    guard byte != 0x3C else { throw failure("'<' in an attribute value") }
                    index += 1
                }
                guard !atEnd else { throw failure("an attribute value does not end") }
                let value = try decode(bytes[start..<index])
                index += 1
                if attributes[attribute] == nil { attributes[attribute] = value }
            }
            var children: [Element] = []
            var text: [UInt8] = []
            while true {
                guard let byte = peek() else { throw failure("the document ends inside <\(name)>") }
                if byte == 0x3C {
                    if starts(with: "</") {
                        index += 2
                        let closing = try self.name()
                        guard closing == name else { throw failure("</\(closing)> closes <\(name)>") }
                        skipSpace()
                        guard peek() == 0x3E else { throw failure("expected '>'") }
                        index += 1
                        let decoded = try decode(text[...])
                        return Element(
                            name: name, attributes: attributes, children: children,
                            text: decoded.trimmingCharacters(in: " \t\r\n"))
                    }
                    if starts(with: "<!--") {
                        skip(past: "-->")
                        continue
                    }
                    if starts(with: "<!") || starts(with: "<?") { throw failure("markup this reader does not take") }
                    children.append(try element(depth: depth + 1))
                } else {
                    text.append(byte)
                    index += 1
                }
            }
        }

        /// Text with entities decoded; a character XML 1.0 does not allow (a C0 control other than tab,
        /// line feed and carriage return, U+FFFE, U+FFFF), raw or as a reference, is refused.
        func decode(_ raw: ArraySlice<UInt8>) throws(Failure) -> String {
            let text = try entitiesDecoded(raw)
            guard !text.unicodeScalars.contains(where: Self.isNotXMLCharacter) else { throw failure("a character XML does not allow") }
            return text
        }

        static func isNotXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
            (scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r") || (0xFFFE...0xFFFF).contains(scalar.value)
        }

        private func entitiesDecoded(_ raw: ArraySlice<UInt8>) throws(Failure) -> String {
            guard raw.contains(0x26) else { return String(decoding: raw, as: UTF8.self) }
            var out: [UInt8] = []
            var position = raw.startIndex
            while position < raw.endIndex {
                let byte = raw[position]
                guard byte == 0x26 else {
                    out.append(byte)
                    position += 1
                    continue
                }
                guard let semicolon = raw[position...].prefix(12).firstIndex(of: 0x3B) else { throw failure("an unterminated entity") }
                let entity = String(decoding: raw[(position + 1)..<semicolon], as: UTF8.self)
                switch entity {
                case "amp": out.append(0x26)
                case "lt": out.append(0x3C)
                case "gt": out.append(0x3E)
                case "quot": out.append(0x22)
                case "apos": out.append(0x27)
                default:
                    let digits = entity.hasPrefix("#x") ? (entity.dropFirst(2), 16) : entity.hasPrefix("#") ? (entity.dropFirst(), 10) : ("", 0)
                    guard digits.1 > 0, let value = UInt32(digits.0, radix: digits.1), let scalar = Unicode.Scalar(value), value != 0
                    else { throw failure("an unknown entity &\(entity);") }
                    out += Array(String(Character(scalar)).utf8)
                }
                position = semicolon + 1
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let drop = Set(set.unicodeScalars)
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, drop.contains(first) { scalars = scalars.dropFirst() }
        while let last = scalars.last, drop.contains(last) { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}

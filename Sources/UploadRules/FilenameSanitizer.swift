/// Makes a client's file name safe to hand to a server that may store it: the last path
/// segment only, no control or bidi characters, no `:` (NTFS stream syntax), no
/// `.`/`..`/Windows device names, at most 255 UTF-8 bytes with the extension kept.
public enum FilenameSanitizer {
    /// Why a name was refused.
    public enum Refusal: Error, Equatable, Sendable {
        /// `.` or `..`, which name directories.
        case dotName
        /// A Windows device name (`CON`, `NUL`, `COM1`, `LPT1.txt`, …).
        case deviceName
    }

    /// The sanitized name; empty stays empty (a form with no file chosen).
    ///
    /// - Throws: `Refusal` for names that cannot be made safe by trimming.
    public static func sanitize(_ raw: [UInt8]) throws(Refusal) -> String {
        if let plain = try sanitizePlainASCII(raw) { return plain }
        return try sanitizeText(raw)
    }

    /// The common case without String work: printable ASCII, no path separator or colon, no
    /// leading dot, no trailing dot or space, at most 255 bytes: kept as is unless its stem is a
    /// device name. `nil` sends the name to `sanitizeText` (the tests check both agree).
    static func sanitizePlainASCII(_ raw: [UInt8]) throws(Refusal) -> String? {
        guard raw.count <= 255, let first = raw.first, let last = raw.last, first != 0x2E, last != 0x2E,
            last != 0x20,
            raw.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x2F && $0 != 0x5C && $0 != 0x3A })
        else { return nil }
        var stem = raw[..<(raw.firstIndex(of: 0x2E) ?? raw.count)]
        while stem.first == 0x20 { stem = stem.dropFirst() }
        while stem.last == 0x20 { stem = stem.dropLast() }
        if stem.count <= 7 {
            let upper = String(
                decoding: stem.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self)
            if deviceNames.contains(upper) { throw .deviceName }
        }
        return String(decoding: raw, as: UTF8.self)
    }

    /// The general case, on Unicode text.
    static func sanitizeText(_ raw: [UInt8]) throws(Refusal) -> String {
        var text = String(decoding: raw, as: UTF8.self)
        if let cut = text.lastIndex(where: { $0 == "/" || $0 == "\\" }) {
            text = String(text[text.index(after: cut)...])
        }
        text = String(String.UnicodeScalarView(text.unicodeScalars.filter { !isUnsafe($0) }))
        // NTFS stores `a.asp:.jpg` as the stream `.jpg` of `a.asp` and `a.php::$DATA` as
        // `a.php`: the extension a check sees would not be the one stored.
        text = String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == ":" ? "_" : $0 }))
        // Trailing dots and spaces are dropped by Windows and hide the real extension.
        while let last = text.last, last == "." || last == " " {
            if text == "." || text == ".." { break }
            text.removeLast()
        }
        if text == "." || text == ".." { throw .dotName }
        let stem = text.split(separator: ".", maxSplits: 1).first.map { String($0).uppercased() } ?? ""
        let trimmedStem = stem.trimmingCharacters(of: " ")
        if deviceNames.contains(trimmedStem) { throw .deviceName }
        return capped(text, bytes: 255)
    }

    static let deviceNames: Set<String> = {
        var names: Set<String> = ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
        for digit in 1...9 {
            names.insert("COM\(digit)")
            names.insert("LPT\(digit)")
        }
        return names
    }()

    /// Controls (C0, DEL, C1), bidi overrides and marks, and the replacement character.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: return true
        case 0xFFFD: return true
        default: return false
        }
    }

    /// At most `bytes` UTF-8 bytes, cut on a character boundary, keeping the extension.
    static func capped(_ text: String, bytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        let ext = text.lastIndex(of: ".").map { String(text[$0...]) } ?? ""
        let keepExtension = ext.utf8.count < limit / 2
        let suffix = keepExtension ? ext : ""
        let base = keepExtension && !ext.isEmpty ? String(text[..<text.lastIndex(of: ".")!]) : text
        var out = ""
        var used = 0
        for character in base {
            let size = String(character).utf8.count
            if used + size + suffix.utf8.count > limit { break }
            out.append(character)
            used += size
        }
        return out + suffix
    }
}

extension String {
    func trimmingCharacters(of character: Character) -> String {
        var slice = Substring(self)
        while slice.first == character { slice = slice.dropFirst() }
        while slice.last == character { slice = slice.dropLast() }
        return String(slice)
    }
}

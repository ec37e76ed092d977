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
        let plain = try raw.withUnsafeBufferPointer { (raw) throws(Refusal) in try isPlainASCII(raw) }
        if plain { return String(decoding: raw, as: UTF8.self) }
        return try sanitizeText(raw)
    }

    /// `sanitize(_:)` for a name given as a string: a plain name is returned as it is.
    public static func sanitize(_ name: String) throws(Refusal) -> String {
        var name = name
        let plain = name.withUTF8 { raw in Result { () throws(Refusal) in try isPlainASCII(raw) } }
        if try plain.get() { return name }
        return try sanitizeText(Array(name.utf8))
    }

    /// The common case without String work: printable ASCII, no path separator or colon, no
    /// leading dot, no trailing dot or space, at most 255 bytes: kept as is unless its stem is a
    /// device name. `nil` sends the name to `sanitizeText` (the tests check both agree).
    static func sanitizePlainASCII(_ raw: [UInt8]) throws(Refusal) -> String? {
        let plain = try raw.withUnsafeBufferPointer { (raw) throws(Refusal) in try isPlainASCII(raw) }
        return plain ? String(decoding: raw, as: UTF8.self) : nil
    }

    /// Whether `raw` is a plain name `sanitizePlainASCII` keeps; throws for a device name.
    static func isPlainASCII(_ raw: UnsafeBufferPointer<UInt8>) throws(Refusal) -> Bool {
        guard raw.count <= 255, let first = raw.first, let last = raw.last, first != 0x2E, last != 0x2E,
            last != 0x20
        else { return false }
        var stemEnd = raw.count
        for (index, byte) in raw.enumerated() {
            guard byte >= 0x20, byte < 0x7F, byte != 0x2F, byte != 0x5C, byte != 0x3A else { return false }
            if byte == 0x2E, stemEnd == raw.count { stemEnd = index }
        }
        var stemStart = 0
        while stemStart < stemEnd, raw[stemStart] == 0x20 { stemStart += 1 }
        while stemEnd > stemStart, raw[stemEnd - 1] == 0x20 { stemEnd -= 1 }
        if stemEnd - stemStart <= 7 {
            // The stem upper-cased, packed into one word: no String for the lookup.
            var packed: UInt64 = 0
            for byte in raw[stemStart..<stemEnd] {
                packed = packed << 8 | UInt64(byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte)
            }
            if packedDeviceNames.contains(packed) { throw .deviceName }
        }
        return true
    }

    /// `deviceNames` packed as `isPlainASCII` packs a stem.
    static let packedDeviceNames: Set<UInt64> = Set(
        deviceNames.map { name in name.utf8.reduce(0) { $0 << 8 | UInt64($1) } })

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

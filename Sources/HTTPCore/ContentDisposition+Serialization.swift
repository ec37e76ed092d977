extension ContentDisposition {
    /// The canonical form sent upstream: `form-data; name="…"; filename="…"`.
    ///
    /// Values are always quoted. As current browsers do (WHATWG HTML, "multipart/form-data
    /// encoding algorithm"), `"` becomes `%22`, CR `%0D` and LF `%0A`; raw UTF-8 is kept and
    /// `filename*` is never written. A backslash is written as the quoted-pair `\\`, so every
    /// parser that reads escapes (PHP, Python, Werkzeug, Go, busboy) and this one read back
    /// the same bytes. Other parameters are dropped.
    public var serialized: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32 + (name?.count ?? 0) + (filename?.count ?? 0))
        appendSerialized(to: &out)
        return out
    }

    /// Appends `serialized` to `out`.
    public func appendSerialized(to out: inout [UInt8]) {
        out.append(contentsOf: "form-data".utf8)
        if let name {
            out.append(contentsOf: "; name=".utf8)
            Self.appendQuoted(name, to: &out)
        }
        if let filename {
            out.append(contentsOf: "; filename=".utf8)
            Self.appendQuoted(filename, to: &out)
        }
    }

    /// Appends `value` as a quoted string with the escaping described on `serialized`.
    public static func appendQuoted(_ value: [UInt8], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "%22".utf8)
            case 0x0D: out.append(contentsOf: "%0D".utf8)
            case 0x0A: out.append(contentsOf: "%0A".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

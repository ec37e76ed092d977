/// A scan of the few fields FormGate reads from S3's XML answers (`UploadId`, `ETag`, the
/// entries of a listing, an error's `Code`): the text between `<name>` and `</name>`, entities
/// decoded. No DTDs, no attributes, no namespaces beyond what the element names carry: S3's
/// answers are flat enough, and nothing else is read.
public struct XMLScan: Sendable {
    private let text: [UInt8]

    public init(_ bytes: [UInt8]) {
        text = bytes
    }

    /// The text of the first `<name>` element.
    public func first(_ name: String) -> String? {
        values(name, in: text[...]).first
    }

    /// The text of every `<name>` element, in order.
    public func all(_ name: String) -> [String] {
        values(name, in: text[...])
    }

    /// Each `<element>…</element>` block (for example `Contents`, `Upload`) as a scan of its own.
    public func elements(_ name: String) -> [XMLScan] {
        ranges(name, in: text[...]).map { XMLScan(Array(text[$0])) }
    }

    private func values(_ name: String, in bytes: ArraySlice<UInt8>) -> [String] {
        ranges(name, in: bytes).map { Self.decodeEntities(bytes[$0]) }
    }

    /// The inner ranges of every `<name>…</name>` (an empty `<name/>` counts, as empty).
    private func ranges(_ name: String, in bytes: ArraySlice<UInt8>) -> [Range<Int>] {
        let open = Array("<\(name)>".utf8)
        let empty = Array("<\(name)/>".utf8)
        let close = Array("</\(name)>".utf8)
        var found: [Range<Int>] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if Self.matches(empty, bytes, at: index) {
                found.append(index..<index)
                index += empty.count
                continue
            }
            guard Self.matches(open, bytes, at: index) else {
                index += 1
                continue
            }
            let start = index + open.count
            var end = start
            while end < bytes.endIndex, !Self.matches(close, bytes, at: end) { end += 1 }
            guard end < bytes.endIndex else { break }
            found.append(start..<end)
            index = end + close.count
        }
        return found
    }

    private static func matches(_ pattern: [UInt8], _ bytes: ArraySlice<UInt8>, at index: Int) -> Bool {
        guard bytes.endIndex - index >= pattern.count else { return false }
        for offset in 0..<pattern.count where bytes[index + offset] != pattern[offset] { return false }
        return true
    }

    /// `&lt; &gt; &amp; &quot; &apos;` and numeric references; anything else as it is.
    static func decodeEntities(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "&"),
                let semicolon = bytes[index...].prefix(12).firstIndex(of: UInt8(ascii: ";"))
            else {
                out.append(byte)
                index += 1
                continue
            }
            let entity = String(decoding: bytes[(index + 1)..<semicolon], as: UTF8.self)
            var scalar: Unicode.Scalar?
            switch entity {
            case "lt": scalar = "<"
            case "gt": scalar = ">"
            case "amp": scalar = "&"
            case "quot": scalar = "\""
            case "apos": scalar = "'"
            default:
                if entity.hasPrefix("#x") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init)
                }
            }
            guard let scalar else {
                out.append(byte)
                index += 1
                continue
            }
            out.append(contentsOf: String(Character(scalar)).utf8)
            index = semicolon + 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}

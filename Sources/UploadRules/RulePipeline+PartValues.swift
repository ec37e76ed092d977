import HTTPCore
import MultipartParsing

/// What a part's template values and log record are made of: the declared type, the
/// extension, the date; and the headers the pipeline writes itself.
extension RulePipeline {
    /// The part's `Content-Type` as the client wrote it (header or inline), for the log.
    ///
    /// The usual long types are the literals of `commonPartTypes` (a string of more than 15 bytes
    /// is otherwise an allocation per part).
    static func declaredType(_ head: PartHead) -> String? {
        guard let bytes = head.declaredContentType else { return nil }
        if bytes.count > 15 {
            for common in commonPartTypes
            where common.utf8.count == bytes.count && common.utf8.elementsEqual(bytes) {
                return common
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` with ASCII letters lowered (an extension; other characters kept as they are,
    /// as `lowercased()` keeps them in the names the sanitizer lets through).
    static func lowercasedASCII(_ text: Substring) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) || !text.utf8.allSatisfy({ $0 < 0x80 })
        else { return String(text) }
        return text.lowercased()
    }

    /// Headers the pipeline writes itself, whatever the route keeps.
    static func isWritten(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        asciiCaseInsensitiveEquals(name, "Content-Disposition")
            || asciiCaseInsensitiveEquals(name, "Content-Type")
    }

    func baseValues(field: String, index: Int) -> TemplateValues {
        var values = requestValues
        values.field = field
        values.index = index
        return values
    }

    /// `YYYYMMDD` (UTC) of a Unix time.
    static func date(_ seconds: Int64) -> String {
        let date = CivilDate(unixSeconds: seconds)
        var digits: (UInt64, UInt64) = (0, 0)
        return withUnsafeMutableBytes(of: &digits) { text in
            var value = date.year * 10_000 + date.month * 100 + date.day
            for index in (0..<8).reversed() {
                text[index] = UInt8(48 + value % 10)
                value /= 10
            }
            return String(decoding: UnsafeRawBufferPointer(rebasing: text[..<8]), as: UTF8.self)
        }
    }
}

/// Part types longer than a small string that clients send most (browsers, curl, SDKs).
let commonPartTypes: [String] = [
    "application/octet-stream", "application/json", "text/plain;charset=UTF-8",
    "text/plain; charset=utf-8", "text/plain; charset=UTF-8", "application/x-zip-compressed",
    "application/vnd.ms-excel", "application/msword", "application/x-msdownload",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
]

/// A JSON string literal: quotes, backslashes and control characters escaped, other
/// characters (UTF-8) kept. Used for error bodies, receipts and token policies; written by
/// `JSONLine.appendQuoted(_:to:)`, the escaper the access log uses.
public func jsonString(_ text: String) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count + 2)
    JSONLine.appendQuoted(text, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
}

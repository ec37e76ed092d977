/// A JSON string literal: quotes, backslashes and control characters escaped, other
/// characters (UTF-8) kept. Used for log lines, error bodies, receipts and token policies.
public func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let digits = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

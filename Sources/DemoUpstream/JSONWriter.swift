import HTTPCore

/// A minimal JSON writer: objects and arrays built as strings with correct escaping.
enum JSON {
    static func string(_ value: String) -> String {
        jsonString(value)
    }

    static func bytes(_ value: [UInt8]) -> String {
        string(String(decoding: value, as: UTF8.self))
    }

    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    static func array(_ elements: [String]) -> String {
        "[" + elements.joined(separator: ",") + "]"
    }
}

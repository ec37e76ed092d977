import Inspection
import SharedState

/// Reads typed values out of YAML nodes, collecting every error with its position and key
/// path instead of stopping at the first.
struct ValueDecoder {
    let file: String
    let environment: [String: String]
    var errors: [ConfigError] = []
    /// Problems that do not refuse the file (keys of a JWKS that cannot be used).
    var warnings: [ConfigError] = []
    /// The configured scanners (`scanners:`, decoded before the routes that name them).
    var scanners: [String: ClamdSettings] = [:]
    /// `redis:`, decoded before the routes that share state through it.
    var redis: RedisSettings?

    mutating func warn(_ mark: SourceMark, _ path: String, _ message: String) {
        warnings.append(
            ConfigError(file: file, line: mark.line, column: mark.column, keyPath: path, message: message))
    }

    mutating func fail(_ mark: SourceMark, _ path: String, _ message: String) {
        errors.append(
            ConfigError(file: file, line: mark.line, column: mark.column, keyPath: path, message: message))
    }

    /// The entries of a mapping; keys outside `allowed` are errors (typos must not pass).
    /// `allowed: nil` accepts any key (maps of names such as `rename_fields`).
    mutating func mapping(_ node: YAMLNode, _ path: String, allowed: Set<String>?)
        -> [(key: String, keyMark: SourceMark, value: YAMLNode)]?
    {
        guard case .mapping(let entries, _) = node else {
            fail(node.mark, path, "expected a mapping, found \(node.kind)")
            return nil
        }
        guard let allowed else { return entries }
        for entry in entries where !allowed.contains(entry.key) {
            let known = allowed.sorted().joined(separator: ", ")
            fail(entry.keyMark, join(path, entry.key), "unknown key (expected one of: \(known))")
        }
        return entries.filter { allowed.contains($0.key) }
    }

    /// A scalar with `${NAME}` expanded from the environment.
    mutating func string(_ node: YAMLNode, _ path: String) -> String? {
        guard case .scalar(let value, let mark, _) = node else {
            fail(node.mark, path, "expected a scalar, found \(node.kind)")
            return nil
        }
        return expand(value, mark, path)
    }

    mutating func expand(_ value: String, _ mark: SourceMark, _ path: String) -> String? {
        guard value.contains("${") else { return value }
        var out = ""
        var rest = Substring(value)
        while let start = rest.firstRange(of: "${") {
            out += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                fail(mark, path, "unterminated ${…}")
                return nil
            }
            let name = String(rest[start.upperBound..<end])
            guard let replacement = environment[name] else {
                fail(mark, path, "environment variable \(name) is not set")
                return nil
            }
            out += replacement
            rest = rest[rest.index(after: end)...]
        }
        return out + rest
    }

    mutating func bool(_ node: YAMLNode, _ path: String) -> Bool? {
        guard let text = string(node, path) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            fail(node.mark, path, "expected true or false, found '\(text)'")
            return nil
        }
    }

    mutating func int(_ node: YAMLNode, _ path: String, range: ClosedRange<Int>) -> Int? {
        guard let text = string(node, path) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            fail(
                node.mark, path,
                "expected a whole number in \(range.lowerBound)...\(range.upperBound), found '\(text)'")
            return nil
        }
        return value
    }

    /// A byte size: `512`, `16KiB`, `1MiB`, `4GiB`, `1TiB`, `10kB`, `5MB`, `2GB`.
    mutating func size(_ node: YAMLNode, _ path: String) -> Int64? {
        guard let text = string(node, path) else { return nil }
        let units: [(String, Int64)] = [
            ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40), ("kB", 1000),
            ("KB", 1000),
            ("MB", 1_000_000), ("GB", 1_000_000_000), ("TB", 1_000_000_000_000), ("B", 1),
        ]
        var number = Substring(text.trimmingSpaces)
        var multiplier: Int64 = 1
        for (suffix, value) in units where number.hasSuffix(suffix) {
            number = number.dropLast(suffix.count)
            multiplier = value
            break
        }
        guard let value = Int64(number.trimmingSpaces), value >= 0, value <= Int64.max / multiplier else {
            fail(node.mark, path, "expected a size such as 512, 16KiB, 1MiB or 4GiB, found '\(text)'")
            return nil
        }
        return value * multiplier
    }

    /// A duration in milliseconds: `500ms`, `10s`, `5m`, `1h`.
    mutating func duration(_ node: YAMLNode, _ path: String) -> Int64? {
        guard let text = string(node, path) else { return nil }
        let units: [(String, Int64)] = [
            ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000),
        ]
        for (suffix, value) in units where text.hasSuffix(suffix) {
            if let number = Int64(text.dropLast(suffix.count).trimmingSpaces), number >= 0,
                number <= Int64.max / value
            {
                return number * value
            }
        }
        fail(node.mark, path, "expected a duration such as 500ms, 10s, 5m or 1h, found '\(text)'")
        return nil
    }

    mutating func stringList(_ node: YAMLNode, _ path: String) -> [String]? {
        guard case .sequence(let items, _) = node else {
            fail(node.mark, path, "expected a list, found \(node.kind)")
            return nil
        }
        return items.enumerated().compactMap { string($0.element, "\(path)[\($0.offset)]") }
    }
}

func join(_ path: String, _ key: String) -> String {
    path.isEmpty ? key : "\(path).\(key)"
}

extension StringProtocol {
    var trimmingSpaces: Substring {
        var slice = Substring(self)
        while slice.first == " " { slice = slice.dropFirst() }
        while slice.last == " " { slice = slice.dropLast() }
        return slice
    }
}

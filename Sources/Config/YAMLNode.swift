import CYAML

/// A position in a YAML file, 1-based, for error messages.
public struct SourceMark: Sendable, Equatable {
    public var line: Int
    public var column: Int
}

/// A YAML document as a tree of scalars, sequences and mappings, each with its position.
/// Anchors and aliases are refused (configuration should be plain).
public indirect enum YAMLNode: Sendable {
    case scalar(String, SourceMark, quoted: Bool)
    case sequence([YAMLNode], SourceMark)
    case mapping([(key: String, keyMark: SourceMark, value: YAMLNode)], SourceMark)

    /// Where the node starts.
    public var mark: SourceMark {
        switch self {
        case .scalar(_, let mark, _), .sequence(_, let mark), .mapping(_, let mark): mark
        }
    }

    /// A word for the node's kind, for messages.
    var kind: String {
        switch self {
        case .scalar: "a scalar"
        case .sequence: "a list"
        case .mapping: "a mapping"
        }
    }
}

/// A YAML syntax error.
public struct YAMLError: Error, Sendable {
    public var message: String
    public var mark: SourceMark
}

extension YAMLNode {
    /// Parses the first document of `text` (an empty document is an empty mapping).
    public static func parse(_ text: String) throws(YAMLError) -> YAMLNode {
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        guard yaml_parser_initialize(parser) == 1 else {
            throw YAMLError(message: "cannot initialize libyaml", mark: SourceMark(line: 1, column: 1))
        }
        defer { yaml_parser_delete(parser) }
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { (buffer) throws(YAMLError) -> YAMLNode in
            yaml_parser_set_input_string(parser, buffer.baseAddress, buffer.count)
            var reader = EventReader(parser: parser)
            return try reader.document()
        }
    }
}

/// Pulls libyaml events and builds nodes.
private struct EventReader {
    let parser: UnsafeMutablePointer<yaml_parser_t>

    mutating func next() throws(YAMLError) -> yaml_event_t {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else {
            let problem = parser.pointee.problem.map { String(cString: $0) } ?? "syntax error"
            let mark = parser.pointee.problem_mark
            throw YAMLError(message: problem, mark: SourceMark(line: mark.line + 1, column: mark.column + 1))
        }
        return event
    }

    mutating func document() throws(YAMLError) -> YAMLNode {
        var event = try next()  // stream start
        yaml_event_delete(&event)
        event = try next()
        defer { yaml_event_delete(&event) }
        if event.type == YAML_STREAM_END_EVENT {
            return .mapping([], SourceMark(line: 1, column: 1))
        }
        var first = try next()
        if first.type == YAML_DOCUMENT_END_EVENT {
            yaml_event_delete(&first)
            return .mapping([], SourceMark(line: 1, column: 1))
        }
        return try node(from: &first)
    }

    /// Builds the node that starts with `event` (which this call deletes).
    mutating func node(from event: inout yaml_event_t) throws(YAMLError) -> YAMLNode {
        defer { yaml_event_delete(&event) }
        let mark = SourceMark(line: event.start_mark.line + 1, column: event.start_mark.column + 1)
        switch event.type {
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let value = String(
                decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            return .scalar(value, mark, quoted: scalar.style != YAML_PLAIN_SCALAR_STYLE)
        case YAML_SEQUENCE_START_EVENT:
            var items: [YAMLNode] = []
            while true {
                var item = try next()
                if item.type == YAML_SEQUENCE_END_EVENT {
                    yaml_event_delete(&item)
                    return .sequence(items, mark)
                }
                items.append(try node(from: &item))
            }
        case YAML_MAPPING_START_EVENT:
            var entries: [(key: String, keyMark: SourceMark, value: YAMLNode)] = []
            while true {
                var keyEvent = try next()
                if keyEvent.type == YAML_MAPPING_END_EVENT {
                    yaml_event_delete(&keyEvent)
                    return .mapping(entries, mark)
                }
                let key = try node(from: &keyEvent)
                guard case .scalar(let name, let keyMark, _) = key else {
                    throw YAMLError(message: "mapping keys must be scalars", mark: key.mark)
                }
                if entries.contains(where: { $0.key == name }) {
                    throw YAMLError(message: "duplicate key '\(name)'", mark: keyMark)
                }
                var valueEvent = try next()
                entries.append((name, keyMark, try node(from: &valueEvent)))
            }
        case YAML_ALIAS_EVENT:
            throw YAMLError(message: "aliases are not supported in the configuration", mark: mark)
        default:
            throw YAMLError(message: "unexpected YAML event", mark: mark)
        }
    }
}

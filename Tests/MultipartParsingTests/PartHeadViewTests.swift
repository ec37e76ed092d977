import HTTPCore
import Testing

@testable import MultipartParsing

/// A part head is a view of the parser's buffers (`PartHeadFields`): a handler that lets a
/// head go gets the next one in the same buffers; a handler that keeps heads keeps each one
/// as it was, and the parser reads the next part into new buffers.
@Suite struct PartHeadViewTests {
    static let boundary = "view-boundary"
    static let body = Array(
        ("--view-boundary\r\nContent-Disposition: form-data; name=\"first\"\r\n\r\none\r\n"
            + "--view-boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\ntwo\r\n"
            + "--view-boundary\r\nContent-Disposition: form-data; name=\"third\"\r\nContent-Type: bogus\r\n\r\n"
            + "three\r\n--view-boundary--\r\n").utf8)

    /// What a test needs of a head, read while the handler has it.
    struct Seen: Equatable {
        var fields: ObjectIdentifier
        var name: String
        var filename: String?
        var headers: [String]
        var declared: String?
    }

    struct Recorder: MultipartEventHandler {
        var keep: Bool
        var seen: [Seen] = []
        var kept: [PartHead] = []

        mutating func handle(_ event: consuming MultipartEvent) {
            switch consume event {
            case .partBegin(let head):
                seen.append(Self.describe(head))
                if keep { kept.append(head) }
            default:
                break
            }
        }

        static func describe(_ head: PartHead) -> Seen {
            var headers: [String] = []
            head.headers.forEachField { name, value in
                headers.append(
                    String(decoding: name, as: UTF8.self) + ": " + String(decoding: value, as: UTF8.self))
            }
            return Seen(
                fields: ObjectIdentifier(head.fields), name: head.nameString, filename: head.filenameString,
                headers: headers,
                declared: head.declaredContentType.map { String(decoding: $0, as: UTF8.self) })
        }
    }

    /// Parses the body fed in two reads split at `split`.
    static func parse(keep: Bool, split: Int) throws -> Recorder {
        var parser = try MultipartParser(boundary: boundary)
        var recorder = Recorder(keep: keep)
        try body.withUnsafeBytes { all in
            try parser.feed(UnsafeRawBufferPointer(rebasing: all[..<split]), into: &recorder)
            try parser.feed(UnsafeRawBufferPointer(rebasing: all[split...]), into: &recorder)
        }
        try parser.finish(into: &recorder)
        return recorder
    }

    static let expected: [(String, String?, [String], String?)] = [
        ("first", nil, ["Content-Disposition: form-data; name=\"first\""], nil),
        (
            "file", "a.txt",
            [
                "Content-Disposition: form-data; name=\"file\"; filename=\"a.txt\"",
                "Content-Type: text/plain",
            ],
            "text/plain"
        ),
        ("third", nil, ["Content-Disposition: form-data; name=\"third\"", "Content-Type: bogus"], "bogus"),
    ]

    static func matches(_ seen: [Seen]) -> Bool {
        seen.count == expected.count
            && zip(seen, expected).allSatisfy {
                $0.name == $1.0 && $0.filename == $1.1 && $0.headers == $1.2 && $0.declared == $1.3
            }
    }

    @Test func headsLetGoAreReadIntoTheSameBuffersAtEverySplit() throws {
        for split in 0...Self.body.count {
            let recorder = try Self.parse(keep: false, split: split)
            #expect(Self.matches(recorder.seen), "split \(split)")
            #expect(Set(recorder.seen.map(\.fields)).count == 1, "split \(split)")
        }
    }

    @Test func keptHeadsKeepTheirValuesAtEverySplit() throws {
        for split in 0...Self.body.count {
            let recorder = try Self.parse(keep: true, split: split)
            #expect(Self.matches(recorder.seen), "split \(split)")
            // Read again after the whole body: each kept head still shows its own part.
            #expect(Self.matches(recorder.kept.map(Recorder.describe)), "split \(split)")
            #expect(Set(recorder.seen.map(\.fields)).count == 3, "split \(split)")
            #expect(recorder.kept[2].hasInvalidContentType && !recorder.kept[1].hasInvalidContentType)
        }
    }

    @Test func theNextBodysParserTakesTheBuffersOnlyWhenNoHeadHoldsThem() throws {
        var parser = try MultipartParser(boundary: Self.boundary)
        var recorder = Recorder(keep: true)
        try Self.body.withUnsafeBytes { all in try parser.feed(all, into: &recorder) }
        try parser.finish(into: &recorder)
        // The last head is kept: its buffers stay with it.
        #expect(parser.takeBuffers().head == nil)
        #expect(Self.matches(recorder.kept.map(Recorder.describe)))

        var second = try MultipartParser(boundary: Self.boundary)
        var forgetful = Recorder(keep: false)
        try Self.body.withUnsafeBytes { all in try second.feed(all, into: &forgetful) }
        try second.finish(into: &forgetful)
        let buffers = second.takeBuffers()
        // Only its identity is kept here: a reference would make the next parser start new ones.
        let taken = ObjectIdentifier(try #require(buffers.head))
        #expect(taken == forgetful.seen[0].fields)
        // The next parser reads its parts into them, and its heads show only its own parts.
        var third = try MultipartParser(boundary: Array(Self.boundary.utf8), buffers: consume buffers)
        var again = Recorder(keep: false)
        try Self.body.withUnsafeBytes { all in try third.feed(all, into: &again) }
        try third.finish(into: &again)
        #expect(Self.matches(again.seen))
        #expect(again.seen.allSatisfy { $0.fields == taken })
    }
}

import HTTPCore
import Testing

/// The buffers a connection keeps from head to head (`takeBuffer()`, `init(buffer:reusing:)`,
/// `replace(with:extraFields:extraBytes:)`): a list made in them holds exactly its own fields,
/// whatever the kept one held before, and changing it never changes a list it was copied from.
@Suite struct HeaderFieldsReuseTests {
    @Test func aHeadReadIntoKeptBuffersHoldsOnlyItsOwnFields() {
        var kept = HeaderFields([("Host", "old.example"), ("X-Old", "1"), ("X-Older", "2")])
        var buffer = kept.takeBuffer()
        #expect(buffer.isEmpty)
        buffer.append(contentsOf: Array("Host: a\r\nX-New: 3\r\n".utf8))
        var fields = HeaderFields(buffer: buffer, reusing: kept)
        #expect(fields.count == 0)
        fields.appendField(name: 0..<4, value: 6..<7)
        fields.appendField(name: 9..<14, value: 16..<17)
        #expect(fields == HeaderFields([("Host", "a"), ("X-New", "3")]))
    }

    @Test func aCopyIntoKeptBuffersIsIndependentOfItsSource() {
        let source = HeaderFields([("Host", "a"), ("Content-Type", "text/plain")])
        var kept = HeaderFields([("X-Stale", String(repeating: "x", count: 300))])
        kept.replace(with: source, extraFields: 4, extraBytes: 64)
        #expect(kept == source)
        kept.set(name: "Content-Type", value: "multipart/form-data; boundary=b")
        kept.append(name: "X-Added", value: "1")
        #expect(source == HeaderFields([("Host", "a"), ("Content-Type", "text/plain")]))
        #expect(
            kept
                == HeaderFields([
                    ("Host", "a"), ("Content-Type", "multipart/form-data; boundary=b"), ("X-Added", "1"),
                ]))
        // Reused again, for a smaller head: nothing of the larger one is left.
        kept.replace(with: HeaderFields([("Host", "b")]))
        #expect(kept == HeaderFields([("Host", "b")]))
    }
}

import HTTPCore
import Testing

/// The span storage (one buffer, one span per field) against a plain model: an array of
/// name/value byte arrays that every operation is also applied to.
@Suite struct HeaderFieldsStorageTests {
    typealias Model = [(name: [UInt8], value: [UInt8])]

    static func same(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.asciiLowercased == $1.asciiLowercased }
    }

    static func expectEqual(_ fields: HeaderFields, _ model: Model, _ comment: Comment? = nil) {
        #expect(fields.count == model.count, comment)
        #expect(fields.fields.map(\.name) == model.map(\.name), comment)
        #expect(fields.fields.map(\.value) == model.map(\.value), comment)
        var visited: Model = []
        fields.forEachField { name, value in visited.append((Array(name), Array(value))) }
        #expect(visited.map(\.name) == model.map(\.name), comment)
        #expect(visited.map(\.value) == model.map(\.value), comment)
        #expect(
            fields.serializedCount == model.reduce(2) { $0 + $1.name.count + $1.value.count + 4 }, comment)
    }

    @Test func spansOverABufferReadLikeCopiedFields() {
        let buffer = Array("Host: a\r\nX-Long-Name: some value\r\nhost: b\r\n\r\n".utf8)
        var parsed = HeaderFields(buffer: buffer)
        parsed.appendField(name: 0..<4, value: 6..<7)
        parsed.appendField(name: 9..<20, value: 22..<32)
        parsed.appendField(name: 34..<38, value: 40..<41)
        let built = HeaderFields([("Host", "a"), ("X-Long-Name", "some value"), ("host", "b")])
        #expect(parsed == built)
        #expect(parsed.count(of: "HOST") == 2)
        #expect(parsed.first("host") == Array("a".utf8))
        #expect(parsed.firstValue("x-long-name").map(Array.init) == Array("some value".utf8))
        #expect(parsed["X-LONG-NAME"] == "some value")
        #expect(!parsed.contains("Hos"))
        #expect(parsed != HeaderFields([("Host", "a"), ("X-Long-Name", "some value"), ("host", "c")]))
    }

    @Test func setReplacesTheFirstAndDropsTheRest() {
        var fields = HeaderFields([("A", "1"), ("B", "2"), ("a", "3"), ("C", "4"), ("A", "5")])
        fields.set(name: "a", value: "new")
        Self.expectEqual(
            fields,
            [(Array("a".utf8), Array("new".utf8)), (Array("B".utf8), [0x32]), (Array("C".utf8), [0x34])])
        fields.set(name: Array("D".utf8), value: Array("x".utf8))
        #expect(fields.fields.last == HeaderFields.Field("D", "x"))
    }

    @Test func removeWhereNameSeesEveryName() {
        var fields = HeaderFields([("Keep", "1"), ("Drop-Me", "2"), ("keep", "3"), ("drop-me", "4")])
        var seen: [String] = []
        fields.removeFields(whereName: { name in
            seen.append(String(decoding: name, as: UTF8.self))
            return Self.same(name, "drop-me".utf8)
        })
        #expect(seen.suffix(4) == ["Keep", "Drop-Me", "keep", "drop-me"])
        Self.expectEqual(fields, [(Array("Keep".utf8), [0x31]), (Array("keep".utf8), [0x33])])
    }

    /// Random operations on random names, applied to the storage and to the model alike.
    @Test func randomOperationsMatchTheModel() {
        let alphabet: [UInt8] = Array("aAbB-".utf8) + [0xC3, 0xA9]
        let seed: UInt64 = 0x4EAD_F1E1
        var generator = SplitMix64(seed: seed)
        func bytes(_ range: ClosedRange<Int>) -> [UInt8] {
            (0..<Int.random(in: range, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }
        }
        for round in 0..<500 {
            let buffer = bytes(0...40)
            var fields = HeaderFields(buffer: buffer)
            var model: Model = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                let name = bytes(0...3)
                let value = bytes(0...5)
                let text = String(decoding: name, as: UTF8.self)
                let isText = Array(text.utf8) == name
                switch Int.random(in: 0...5, using: &generator) {
                case 0 where buffer.count > 1:
                    let a = Int.random(in: 0..<buffer.count, using: &generator)
                    let b = Int.random(in: a...buffer.count, using: &generator)
                    let c = Int.random(in: 0...buffer.count, using: &generator)
                    fields.appendField(name: a..<b, value: c..<buffer.count)
                    model.append((Array(buffer[a..<b]), Array(buffer[c...])))
                case 1, 0:
                    fields.append(HeaderFields.Field(name: name, value: value))
                    model.append((name, value))
                case 2:
                    fields.set(name: name, value: value)
                    if let first = model.firstIndex(where: { Self.same($0.name, name) }) {
                        model[first] = (name, value)
                        model = model.enumerated().filter {
                            $0.offset <= first || !Self.same($0.element.name, name)
                        }
                        .map(\.element)
                    } else {
                        model.append((name, value))
                    }
                case 3 where isText:
                    fields.removeAll(named: text)
                    model.removeAll { Self.same($0.name, name) }
                case 4:
                    fields.removeFields(whereName: { Self.same($0, name) })
                    model.removeAll { Self.same($0.name, name) }
                default:
                    fields.removeAll { $0.value == value }
                    model.removeAll { $0.value == value }
                }
                Self.expectEqual(fields, model, "round \(round), seed \(seed)")
                guard isText else { continue }
                let matching = model.filter { Self.same($0.name, name) }
                #expect(fields.first(text) == matching.first?.value, "round \(round), seed \(seed)")
                #expect(fields.count(of: text) == matching.count, "round \(round), seed \(seed)")
            }
        }
    }

    @Test func copiesAreIndependent() {
        let original = HeaderFields([("A", "1"), ("B", "2")])
        var copy = original
        copy.set(name: "A", value: "changed")
        copy.removeAll(named: "B")
        #expect(original == HeaderFields([("A", "1"), ("B", "2")]))
        #expect(copy == HeaderFields([("A", "changed")]))
    }
}

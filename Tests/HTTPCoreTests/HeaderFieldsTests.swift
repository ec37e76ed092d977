import HTTPCore
import Testing

@Suite struct HeaderFieldsTests {
    @Test func orderAndCaseInsensitiveLookup() {
        var fields = HeaderFields([("Content-Type", "text/plain"), ("X-A", "1"), ("x-a", "2")])
        #expect(fields["content-type"] == "text/plain")
        #expect(fields["X-A"] == "1")
        #expect(fields.count(of: "X-a") == 2)
        fields.set(name: "X-A", value: "3")
        #expect(fields.fields.map(\.valueString) == ["text/plain", "3"])
        fields.removeAll(named: "CONTENT-TYPE")
        #expect(!fields.contains("Content-Type"))
        fields.append(name: "Y", value: "4")
        #expect(fields.fields.map(\.nameString) == ["X-A", "Y"])
    }

    /// The byte-level lookups agree with the plain definition (ASCII case folded, nothing
    /// else) on random names, non-ASCII and near misses included.
    @Test func lookupsMatchTheirDefinition() {
        let alphabet: [UInt8] = Array("aAbBzZ-@[`{".utf8) + [0xC3, 0xA9, 0xE3, 0x7F]
        let seed: UInt64 = 0x100C_0F5E
        var generator = SplitMix64(seed: seed)
        func name() -> [UInt8] {
            (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }
        }
        func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
            a.count == b.count
                && zip(a, b).allSatisfy { x, y in
                    let fold = { (c: UInt8) in c >= 0x41 && c <= 0x5A ? c + 32 : c }
                    return fold(x) == fold(y)
                }
        }
        for _ in 0..<2000 {
            var fields = HeaderFields()
            for index in 0..<Int.random(in: 0...4, using: &generator) {
                fields.append(HeaderFields.Field(name: name(), value: [UInt8(index)]))
            }
            let query = name()
            let text = String(decoding: query, as: UTF8.self)
            guard Array(text.utf8) == query else { continue }  // not valid UTF-8
            let matching = fields.fields.filter { same($0.name, query) }
            let context = Comment(rawValue: "query \(query) in \(fields.fields.map(\.name)), seed \(seed)")
            #expect(fields.first(text) == matching.first?.value, context)
            #expect(fields.count(of: text) == matching.count, context)
            #expect(fields.contains(text) == !matching.isEmpty, context)
            var removed = fields
            removed.removeAll(named: text)
            #expect(removed.fields == fields.fields.filter { !same($0.name, query) }, context)
        }
    }

    @Test func valuesAreBytes() {
        let fields = HeaderFields().appending(HeaderFields.Field(name: Array("X".utf8), value: [0xFF, 0x41]))
        #expect(fields.first("x") == [0xFF, 0x41])
    }

    @Test func byteClassesMatchTheirGrammar() {
        let alphanumeric = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        let token = Set((alphanumeric + "!#$%&'*+-.^_`|~").utf8)
        let boundary = Set((alphanumeric + "'()+_,-./:=? ").utf8)
        let unreserved = Set((alphanumeric + "-._~").utf8)
        let path = unreserved.union("!$&'()*+,;=:@".utf8)
        let query = path.union("/?%[]{}|^`".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(ByteClass.isTokenChar(byte) == token.contains(byte), "tchar \(byte)")
            #expect(ByteClass.isBoundaryChar(byte) == boundary.contains(byte), "bchar \(byte)")
            #expect(ByteClass.isUnreserved(byte) == unreserved.contains(byte), "unreserved \(byte)")
            #expect(ByteClass.isPathChar(byte) == path.contains(byte), "pchar \(byte)")
            #expect(ByteClass.isQueryChar(byte) == query.contains(byte), "query \(byte)")
        }
    }

    @Test func byteClasses() {
        #expect(ByteClass.isTokenChar(UInt8(ascii: "!")))
        #expect(!ByteClass.isTokenChar(UInt8(ascii: ":")))
        #expect(ByteClass.isBoundaryChar(UInt8(ascii: "?")))
        #expect(!ByteClass.isBoundaryChar(UInt8(ascii: "\\")))
        #expect(ByteClass.isForbiddenInFieldValue(0))
        #expect(!ByteClass.isForbiddenInFieldValue(0x09))
        #expect(ByteClass.isForbiddenInFieldValue(0x7F))
    }

    @Test func sinks() {
        var array = ByteArraySink()
        var counting = CountingSink()
        array.write("ab" as StaticString)
        array.write([0x63])
        counting.write(array.bytes)
        #expect(array.bytes == Array("abc".utf8))
        #expect(counting.count == 3)
    }
}

extension HeaderFields {
    fileprivate func appending(_ field: Field) -> HeaderFields {
        var copy = self
        copy.append(field)
        return copy
    }
}

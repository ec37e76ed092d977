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

    @Test func valuesAreBytes() {
        let fields = HeaderFields().appending(HeaderFields.Field(name: Array("X".utf8), value: [0xFF, 0x41]))
        #expect(fields.first("x") == [0xFF, 0x41])
    }

    @Test func byteClassesMatchTheirGrammar() {
        let alphanumeric = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        let token = Set((alphanumeric + "!#$%&'*+-.^_`|~").utf8)
        let boundary = Set((alphanumeric + "'()+_,-./:=? ").utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(ByteClass.isTokenChar(byte) == token.contains(byte), "tchar \(byte)")
            #expect(ByteClass.isBoundaryChar(byte) == boundary.contains(byte), "bchar \(byte)")
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

import HTTP2
import HTTPCore
import Testing

/// The stream table against a `Dictionary` model: every lookup agrees after inserts, removals
/// (with the backward shift) and growth, for the ids clients send and for hostile spacings.
@Suite struct StreamTableTests {
    final class Box {
        let id: Int32
        init(_ id: Int32) { self.id = id }
    }

    /// Applies `operations` (positive: insert, negative: remove) to a table and a dictionary and
    /// checks every id seen after each step; `context` (a random run's seed) joins each failure.
    func agree(_ operations: [Int32], _ context: String = "") {
        var table = StreamTable<Box>()
        var model: [Int32: Box] = [:]
        var seen = Set<Int32>()
        for operation in operations {
            let id = abs(operation)
            seen.insert(id)
            if operation > 0 {
                let box = Box(id)
                table[id] = box
                model[id] = box
            } else {
                #expect(
                    table.removeValue(forKey: id) === model.removeValue(forKey: id), "remove \(id)\(context)")
            }
            #expect(table.count == model.count, "\(operation)\(context)")
            for id in seen { #expect(table[id] === model[id], "id \(id)\(context)") }
        }
        #expect(Set(table.values.map(\.id)) == Set(model.keys), "values\(context)")
        var visited: [Int32] = []
        table.forEachValue { visited.append($0.id) }
        #expect(visited.sorted() == model.keys.sorted(), "visited\(context)")
    }

    @Test func consecutiveOddIdsOpenAndClose() {
        // A client's streams: up to 40 open at once, each closed a little after it opened.
        var operations: [Int32] = []
        for index in 0..<400 {
            operations.append(Int32(2 * index + 1))
            if index >= 40 { operations.append(-Int32(2 * (index - 40) + 1)) }
        }
        agree(operations)
    }

    @Test(arguments: [16, 32, 64, 1024, 1 << 20])
    func idsSpacedByAPowerOfTwoStillFindEachOther(spacing: Int) {
        // Ids chosen to share low bits: probe runs, removals from their middle, growth.
        let ids = (0..<100).map { Int32(1 + $0 * spacing) }
        var operations = ids
        operations += ids.enumerated().filter { $0.offset % 3 == 0 }.map { -$0.element }
        operations += ids.enumerated().filter { $0.offset % 3 == 0 }.map { $0.element }
        operations += ids.map { -$0 }
        agree(operations)
    }

    @Test func randomOperationsAgreeWithADictionary() {
        let seed: UInt64 = 0x57AB
        var random = SplitMix64(seed: seed)
        var operations: [Int32] = []
        for _ in 0..<3000 {
            let id = Int32.random(in: 1...300, using: &random)
            operations.append(Bool.random(using: &random) ? id : -id)
        }
        agree(operations, ", seed \(seed)")
    }

    @Test func removeAllEmptiesAndTheTableIsReusable() {
        var table = StreamTable<Box>()
        for id in stride(from: Int32(1), through: 99, by: 2) { table[id] = Box(id) }
        #expect(table.count == 50)
        #expect(table.contains { $0.id == 51 })
        table.removeAll()
        #expect(table.isEmpty)
        #expect(table[51] == nil)
        #expect(!table.contains { _ in true })
        table[7] = Box(7)
        #expect(table[7]?.id == 7)
        table[7] = nil
        #expect(table.isEmpty)
    }
}

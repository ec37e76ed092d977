/// What a stripper found and did, shared by the per-format machines and reported by
/// `MetadataStripper`.
struct StripReport: Sendable {
    var stripped: [String] = []
    var passedThrough = false
    var unstrippable: String?
    var patches: [(offset: Int64, bytes: [UInt8])] = []
    /// Whether applying `patches` finishes the job (false once a reason without a patch came).
    var patchesComplete = true

    /// Records a removed kind of metadata once, in order of first appearance.
    mutating func note(_ name: String) {
        if !stripped.contains(name) { stripped.append(name) }
    }

    /// Records why metadata stays in the stream: the first reason, unless a later one has no
    /// patch (`patchable` false) and an earlier one had, since that one is the caller's concern.
    mutating func refuse(_ reason: String, patchable: Bool) {
        if !patchable {
            if patchesComplete { unstrippable = reason }
            patchesComplete = false
        } else if unstrippable == nil {
            unstrippable = reason
        }
    }
}

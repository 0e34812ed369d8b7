/// The numeric part of a release (`0.3.0-dev` is `0.3.0`), for comparing releases.
///
/// A pre-release counts as its release: a contract step that ships in `0.4.0` names `0.4.0`, and
/// the `0.4.0-dev` builds that carry it do not block it.
struct ReleaseVersion: Comparable, Sendable, CustomStringConvertible {
    let components: [Int]

    init(_ text: String) {
        let core = text.split(separator: "-", maxSplits: 1).first.map(String.init) ?? text
        components = core.split(separator: ".").map { Int($0) ?? 0 }
    }

    var description: String { components.map(String.init).joined(separator: ".") }

    static func < (lhs: ReleaseVersion, rhs: ReleaseVersion) -> Bool {
        let count = max(lhs.components.count, rhs.components.count)
        for index in 0..<count {
            let left = index < lhs.components.count ? lhs.components[index] : 0
            let right = index < rhs.components.count ? rhs.components[index] : 0
            if left != right { return left < right }
        }
        return false
    }

    static func == (lhs: ReleaseVersion, rhs: ReleaseVersion) -> Bool { !(lhs < rhs) && !(rhs < lhs) }
}

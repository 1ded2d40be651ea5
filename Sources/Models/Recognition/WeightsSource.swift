import DataFiles
import Foundation
import WeightsFormat

/// Where a chain's weights come from: a variant name (`shape-classifier.int8`) in, a validated file out.
public protocol WeightsSource: Sendable {
    /// The weights of `variant`, or an error `failureKind(of:)` classifies (missing and corrupt files are
    /// permanent, I/O errors transient).
    func load(_ variant: String) throws -> ModelFile
}

/// No weights file for a variant in any of the places looked: a permanent failure naming each place.
public struct WeightsNotFound: Error, CustomStringConvertible, Sendable, Equatable {
    /// The variant looked for.
    public let variant: String
    /// Every place looked, in order, each with what was there (a path, or why it was skipped).
    public let places: [String]

    /// No `variant` in any of `places` (for a `WeightsSource` of an app's own, too).
    public init(variant: String, places: [String]) { (self.variant, self.places) = (variant, places) }

    /// Where the variant was looked for, in one line.
    public var description: String {
        "no \(variant).weights; looked in " + places.joined(separator: ", ")
    }
}

/// The chain's weights links: one per variant, each loading its file from `source` and building the task's
/// classifier with `make`. A file the classifier rejects is `IncompatibleModel` (permanent), not bad input.
package func weightsLinks<Classifier>(
    _ variants: [String], source: any WeightsSource, make: @escaping @Sendable (ModelFile) throws(DataError) -> Classifier
) -> [ChainLink<Classifier>] {
    variants.map { variant in
        ChainLink(name: variant) {
            let file = try source.load(variant)
            do throws(DataError) {
                return try make(file)
            } catch {
                throw IncompatibleModel(error)
            }
        }
    }
}

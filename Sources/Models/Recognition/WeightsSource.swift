import Foundation

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

    public var description: String {
        "no \(variant).weights; looked in " + places.joined(separator: ", ")
    }
}

/// The weights files of `classify`, looked for in order:
/// 1. `--weights FILE`: that file only, for every variant;
/// 2. the folder in the environment variable `CLASSIFY_WEIGHTS`;
/// 3. `Weights/` in the current directory;
/// 4. the shipped location: the `Weights/` folder of the package the tool was built from.
///
/// The first folder that has `VARIANT.weights` is used; a file that is there but broken is an error of its link,
/// not a reason to look further (it would hide the problem).
public struct WeightsLocator: WeightsSource {
    /// The explicit file (`--weights`), if any.
    public let explicitFile: String?
    /// The folders, in order, each with how it was found (for error messages).
    public let folders: [(origin: String, path: String?)]

    /// The environment variable naming a weights folder.
    public static let environmentVariable = "CLASSIFY_WEIGHTS"

    /// Creates the locator; `shippedFolder` is the package's `Weights/` as built.
    public init(explicitFile: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                currentDirectory: String = FileManager.default.currentDirectoryPath, shippedFolder: String?) {
        self.explicitFile = explicitFile
        let fromEnvironment = environment[Self.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        var folders: [(String, String?)] = [("$\(Self.environmentVariable)", fromEnvironment),
                                            ("./Weights", URL(fileURLWithPath: currentDirectory).appendingPathComponent("Weights").path)]
        if let shippedFolder, shippedFolder != folders[1].1 { folders.append(("shipped", shippedFolder)) }
        self.folders = folders
    }

    /// The paths `variant` is looked for at, in order (`nil` where a folder is not configured).
    public func candidates(for variant: String) -> [(origin: String, path: String?)] {
        if let explicitFile { return [("--weights", explicitFile)] }
        return folders.map { ($0.origin, $0.path.map { URL(fileURLWithPath: $0).appendingPathComponent("\(variant).weights").path }) }
    }

    /// Loads the first existing candidate; none existing is `WeightsNotFound` listing every place.
    public func load(_ variant: String) throws -> ModelFile {
        var places: [String] = []
        for (origin, path) in candidates(for: variant) {
            guard let path else {
                places.append("\(origin) (not set)")
                continue
            }
            if explicitFile != nil || FileManager.default.fileExists(atPath: path) {
                return try ModelFile(contentsOf: URL(fileURLWithPath: path))
            }
            places.append(origin == "./Weights" || origin == "shipped" ? path : "\(origin) (\(path))")
        }
        throw WeightsNotFound(variant: variant, places: places)
    }
}

/// The chain's weights links: one per variant, each loading its file from `source` and building the task's
/// classifier with `make`. A file the classifier rejects is `IncompatibleModel` (permanent), not bad input.
public func weightsLinks<Classifier>(
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

/// Why input data (a CSV file, a drawing, a recording) cannot be used: where, and what was expected.
public struct DataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file, or `-` for standard input.
    public let file: String
    /// 1-based line, when the problem is on one.
    public let line: Int?
    /// 1-based column and its header name, when the problem is in one field.
    public let column: (index: Int, name: String)?
    /// What is wrong and what was expected.
    public let message: String
    /// Whether the file itself is missing (exit 66) rather than wrong (exit 65), or unreadable (74).
    public let kind: Kind

    /// The broad kind of problem, for exit codes.
    public enum Kind: Sendable, Equatable {
        /// The content is wrong.
        case invalid
        /// No such file.
        case missingFile
        /// The operating system could not read it.
        case unreadable
    }

    /// Creates the error.
    public init(file: String, line: Int? = nil, column: (index: Int, name: String)? = nil, message: String, kind: Kind = .invalid) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.kind = kind
    }

    /// `file:line: column 4 (x): message`.
    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let column { location += ": column \(column.index) (\(column.name))" }
        return "\(location): \(message)"
    }

    /// Equal files, places, kinds and messages.
    public static func == (lhs: DataError, rhs: DataError) -> Bool {
        lhs.file == rhs.file && lhs.line == rhs.line && lhs.column?.index == rhs.column?.index
            && lhs.column?.name == rhs.column?.name && lhs.message == rhs.message && lhs.kind == rhs.kind
    }
}

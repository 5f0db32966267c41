package errno

// MySQL 8.0 codes for CHECK constraints, generated columns and expression
// defaults that the parser's tables lack (their SQLSTATE is HY000, as in
// MySQL).
const (
	ErrDefaultValGeneratedNamedFunctionIsNotAllowed uint16 = 3770
	ErrDefaultValGeneratedFunctionIsNotAllowed      uint16 = 3771
	ErrDefaultValGeneratedRefAutoInc                uint16 = 3772
	ErrDefaultValGeneratedNonPrior                  uint16 = 3773
	ErrGeneratedColumnNamedFunctionIsNotAllowed     uint16 = 3763
	ErrNonBooleanExprForCheckConstraint             uint16 = 3812
	ErrColumnCheckConstraintReferencesOtherColumn   uint16 = 3813
	ErrCheckConstraintNamedFunctionIsNotAllowed     uint16 = 3814
	ErrCheckConstraintFunctionIsNotAllowed          uint16 = 3815
	ErrCheckConstraintVariables                     uint16 = 3816
	ErrCheckConstraintRowValue                      uint16 = 3817
	ErrCheckConstraintRefersAutoIncrementColumn     uint16 = 3818
	ErrCheckConstraintViolated                      uint16 = 3819
	ErrCheckConstraintRefersUnknownColumn           uint16 = 3820
	ErrCheckConstraintNotFound                      uint16 = 3821
	ErrCheckConstraintDupName                       uint16 = 3822
	ErrDependentByDefaultGeneratedValue             uint16 = 3837
	ErrDependentByCheckConstraint                   uint16 = 3959
)

var constraintMessages = map[uint16]string{
	ErrDefaultValGeneratedNamedFunctionIsNotAllowed: "Default value expression of column '%s' contains a disallowed function: %s.",
	ErrDefaultValGeneratedFunctionIsNotAllowed:      "Default value expression of column '%s' contains a disallowed function.",
	ErrDefaultValGeneratedRefAutoInc:                "Default value expression of column '%s' cannot refer to an auto-increment column.",
	ErrDefaultValGeneratedNonPrior:                  "Default value expression of column '%s' cannot refer to a column defined after it if that column is a generated column or has an expression as default value.",
	ErrGeneratedColumnNamedFunctionIsNotAllowed:     "Expression of generated column '%s' contains a disallowed function: %s.",
	ErrNonBooleanExprForCheckConstraint:             "An expression of non-boolean type specified to a check constraint '%s'.",
	ErrColumnCheckConstraintReferencesOtherColumn:   "Column check constraint '%s' references other column.",
	ErrCheckConstraintNamedFunctionIsNotAllowed:     "An expression of a check constraint '%s' contains disallowed function: %s.",
	ErrCheckConstraintFunctionIsNotAllowed:          "An expression of a check constraint '%s' contains disallowed function.",
	ErrCheckConstraintVariables:                     "An expression of a check constraint '%s' cannot refer to a user or system variable.",
	ErrCheckConstraintRowValue:                      "Check constraint '%s' cannot refer to a row value.",
	ErrCheckConstraintRefersAutoIncrementColumn:     "Check constraint '%s' cannot refer to an auto-increment column.",
	ErrCheckConstraintViolated:                      "Check constraint '%s' is violated.",
	ErrCheckConstraintRefersUnknownColumn:           "Check constraint '%s' refers to non-existing column '%s'.",
	ErrCheckConstraintNotFound:                      "Check constraint '%s' is not found in the table.",
	ErrCheckConstraintDupName:                       "Duplicate check constraint name '%s'.",
	ErrDependentByDefaultGeneratedValue:             "Column '%s' of table '%s' has a default value expression dependency and cannot be dropped or renamed.",
	ErrDependentByCheckConstraint:                   "Check constraint '%s' uses column '%s', hence column cannot be dropped or renamed.",
}

// NewConstraint returns one of the errors above with MySQL's message.
func NewConstraint(code uint16, args ...any) *SQLError {
	return New(code, constraintMessages[code], args...)
}

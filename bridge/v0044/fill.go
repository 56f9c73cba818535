package v0044

import (
	"reflect"
	"strings"
)

// fillUnset sets every optional member a bridge left unset to its empty
// value, recursively, so that an answer carries every member slurmrestd
// always sends ("" for strings, 0 and false, {set: false, infinite: false,
// number: 0} for numbers that may be unset, [] for lists): clients that
// index members without checking for them keep working. Members a bridge
// set are not touched. Answers copied from a filled template share its
// pointed-to members: they must be replaced, never modified in place.
func fillUnset(v any) {
	fill(reflect.ValueOf(v).Elem(), 0)
}

func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		if isOpt(v.Type()) {
			set := v.FieldByName("Set")
			if !set.Bool() {
				set.SetBool(true)
			}
			fill(v.FieldByName("Value"), depth+1)
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.CanSet() {
				fill(f, depth+1)
			}
		}
	case reflect.Pointer:
		if v.IsNil() && v.CanSet() && v.Type().Elem().Kind() == reflect.Struct {
			v.Set(reflect.New(v.Type().Elem()))
		}
		if !v.IsNil() {
			fill(v.Elem(), depth+1)
		}
	case reflect.Slice:
		if v.IsNil() && v.CanSet() {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		}
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), depth+1)
		}
	}
}

// isOpt recognises ogen's optional wrappers (OptString, OptV0044...): a
// struct with exactly Value and Set. Nullable wrappers (OptNil...) are left
// alone: unset there means null, which the spec does not want filled.
func isOpt(t reflect.Type) bool {
	if !strings.HasPrefix(t.Name(), "Opt") || strings.HasPrefix(t.Name(), "OptNil") || t.NumField() != 2 {
		return false
	}
	_, hasValue := t.FieldByName("Value")
	_, hasSet := t.FieldByName("Set")
	return hasValue && hasSet
}

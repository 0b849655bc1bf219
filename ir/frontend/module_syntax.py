"""The parse tree's module forms as syntax (a mixin of ir/frontend/parse.py's ToSyntax): module bindings,
structures, names and applications, `open`, `M.(e)`. Module types and ascriptions are parsed and dropped: they
are not checked (ir/frontend/modules.py elaborates the modules away; docs/language.md says what that means)."""

from incflat.ir.frontend.syntax import (LocalOpenE, ModApply, ModImport, ModLambda, ModName, ModStruct,
                                       ModuleDecl, OpenDecl)


class ModuleSyntax:
    """Mixin of ToSyntax: what the grammar's module rules give."""

    def module_decl(self, c):
        params = [x for x in c if isinstance(x, tuple) and x[0] == "module parameter"]
        return ModuleDecl(str(c[1]), self.loc(c[1]), [(n, loc) for _, n, loc in params], c[-1],
                          self.loc(c[0]))

    def module_type_decl(self, c):
        return None  # not checked: a module's ascription is transparent

    def mod_param(self, c):
        return ("module parameter", str(c[1]), self.loc(c[1]))

    def mod_app(self, c):
        out = c[0]
        for arg in c[1:]:
            out = ModApply(out, arg, out.loc)
        return out

    def mod_ascribe(self, c):
        return c[0]

    def mod_struct(self, c):
        return ModStruct([d for d in c[1:-1] if d is not None], self.loc(c[0]))

    def mod_name(self, c):
        return ModName(tuple(str(c[0]).split(".")), self.loc(c[0]))

    def mod_paren(self, c):
        return c[1]

    def mod_lambda(self, c):
        params = [(n, loc) for x in c if isinstance(x, tuple) and x[0] == "module parameter" for _, n, loc in [x]]
        return ModLambda(params, c[-1], self.loc(c[0]))

    def mod_import(self, c):
        return ModImport(self.literal_text(c[1]), self.loc(c[0]))

    def open_module(self, c):
        return OpenDecl(c[1], self.loc(c[0]))

    def local_open(self, c):
        tok = c[0]
        return LocalOpenE(self.loc(tok), self.span(tok, c[-1]), tuple(str(tok)[:-2].split(".")), c[1])

    # module types: parsed, not kept
    def mod_type(self, c):
        return None

    mod_type_with = functor_type = mod_type_refined = mod_type_atom = spec = mod_type

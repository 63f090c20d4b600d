# src/store/module.mk: embeds db/schema.sql and its migrations (db/migrate-*.sql:
# the only places DDL lives) into libevident.a as the C arrays ev_schema_sql,
# ev_migrate2_sql .. ev_migrate7_sql, so the store can create a new
# database without reading the tree at run time.
#
# The generator uses only od and sed (present on a fresh Debian; xxd may
# not be): each byte of the file becomes a 0xNN initialiser, followed by a
# terminating NUL, so the bytes are exact whatever the file holds.
# Included by the top Makefile after LIB_OBJ and the archive rule are read:
# the archive's prerequisite list is already expanded there, so the object
# is added to it here with a prerequisite-only rule (the archive recipe uses
# $^), and to LIB_OBJ so its .d file is included like the others.

SCHEMA_SQL_C := $(BUILD)/gen/schema_sql.c
SCHEMA_SQL_O := $(BUILD)/obj/gen/schema_sql.o

$(SCHEMA_SQL_C): db/schema.sql db/migrate-2.sql db/migrate-3.sql db/migrate-4.sql db/migrate-5.sql db/migrate-6.sql db/migrate-7.sql src/store/module.mk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q){ echo '/* Generated from db/schema.sql and db/migrate-*.sql by src/store/module.mk: do not edit. */'; \
	  echo '#include <stddef.h>'; \
	  echo 'extern const char ev_schema_sql[];'; \
	  echo 'extern const size_t ev_schema_sql_len;'; \
	  echo 'const char ev_schema_sql[] = {'; \
	  od -An -v -tx1 db/schema.sql | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; \
	  echo 'const size_t ev_schema_sql_len = sizeof ev_schema_sql - 1;'; \
	  echo 'extern const char ev_migrate2_sql[];'; \
	  echo 'extern const size_t ev_migrate2_sql_len;'; \
	  echo 'const char ev_migrate2_sql[] = {'; \
	  od -An -v -tx1 db/migrate-2.sql | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; \
	  echo 'const size_t ev_migrate2_sql_len = sizeof ev_migrate2_sql - 1;'; \
	  echo 'extern const char ev_migrate3_sql[];'; \
	  echo 'extern const size_t ev_migrate3_sql_len;'; \
	  echo 'const char ev_migrate3_sql[] = {'; \
	  od -An -v -tx1 db/migrate-3.sql | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; \
	  echo 'const size_t ev_migrate3_sql_len = sizeof ev_migrate3_sql - 1;'; \
	  echo 'extern const char ev_migrate4_sql[];'; \
	  echo 'extern const size_t ev_migrate4_sql_len;'; \
	  echo 'const char ev_migrate4_sql[] = {'; \
	  od -An -v -tx1 db/migrate-4.sql | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; \
	  echo 'const size_t ev_migrate4_sql_len = sizeof ev_migrate4_sql - 1;'; \
	  echo 'extern const char ev_migrate5_sql[];'; \
	  echo 'extern const size_t ev_migrate5_sql_len;'; \
	  echo 'const char ev_migrate5_sql[] = {'; \
	  od -An -v -tx1 db/migrate-5.sql | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; \
	  echo 'const size_t ev_migrate5_sql_len = sizeof ev_migrate5_sql - 1;'; \
	  echo 'extern const char ev_migrate6_sql[];'; \
	  echo 'extern const size_t ev_migrate6_sql_len;'; \
	  echo 'const char ev_migrate6_sql[] = {'; \
	  od -An -v -tx1 db/migrate-6.sql | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; \
	  echo 'const size_t ev_migrate6_sql_len = sizeof ev_migrate6_sql - 1;'; \
	  echo 'extern const char ev_migrate7_sql[];'; \
	  echo 'extern const size_t ev_migrate7_sql_len;'; \
	  echo 'const char ev_migrate7_sql[] = {'; \
	  od -An -v -tx1 db/migrate-7.sql | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; \
	  echo 'const size_t ev_migrate7_sql_len = sizeof ev_migrate7_sql - 1;'; \
	} > $@.tmp && mv $@.tmp $@

$(SCHEMA_SQL_O): $(SCHEMA_SQL_C) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(EV_CPPFLAGS) $(EV_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libevident.a: $(SCHEMA_SQL_O)
LIB_OBJ += $(SCHEMA_SQL_O)

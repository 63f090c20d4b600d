# sign module fragment: src/sign/ (keys, DSSE envelopes, in-toto
# attestations) is part of libevident through the top Makefile's wildcard;
# verify-bundle links it too, for --key, --attestation and --vsa.
SIGN_SRC := $(wildcard src/sign/*.c)
SIGN_OBJ := $(SIGN_SRC:%.c=$(BUILD)/obj/%.o)
$(BUILD)/libevident_verify.a: $(SIGN_OBJ)
-include $(SIGN_OBJ:.o=.d)
$(BUILD)/tests/check_sign: $(BUILD)/obj/src/verify/fixture/vfixture.o
# the fixture needs library code its caller does not: the archive again after it
$(BUILD)/tests/check_sign: EV_LDLIBS := $(BUILD)/libevident.a $(EV_LDLIBS)

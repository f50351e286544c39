// External allocators: descriptions (before aclInit too), registration per stream
// and its round trip through aclrtAllocatorGetByStream, and every error.
#include <atomic>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

std::atomic<int> gCalls{0};  // Cohort never calls a registered allocator

void* allocA(aclrtAllocator, size_t) {
  ++gCalls;
  return nullptr;
}
void* allocB(aclrtAllocator, size_t) {
  ++gCalls;
  return nullptr;
}
void freeBlock(aclrtAllocator, aclrtAllocatorBlock) { ++gCalls; }
void* allocAdvise(aclrtAllocator, size_t, aclrtAllocatorAddr) {
  ++gCalls;
  return nullptr;
}
void* addressOf(aclrtAllocatorBlock) {
  ++gCalls;
  return nullptr;
}

int gObjectA = 0;
int gObjectB = 0;

// A description with everything Register requires.
aclrtAllocatorDesc completeDescription(void* object, aclrtAllocatorAllocFunc alloc) {
  aclrtAllocatorDesc desc = aclrtAllocatorCreateDesc();
  EXPECT_NE(desc, nullptr);
  EXPECT_EQ(aclrtAllocatorSetObjToDesc(desc, object), ACL_SUCCESS);
  EXPECT_EQ(aclrtAllocatorSetAllocFuncToDesc(desc, alloc), ACL_SUCCESS);
  EXPECT_EQ(aclrtAllocatorSetFreeFuncToDesc(desc, freeBlock), ACL_SUCCESS);
  EXPECT_EQ(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, addressOf), ACL_SUCCESS);
  return desc;
}

TEST(AclAllocator, DescriptionsWorkBeforeInit) {
  aclrtAllocatorDesc desc = aclrtAllocatorCreateDesc();
  ASSERT_NE(desc, nullptr);
  ASSERT_ACL_OK(aclrtAllocatorSetObjToDesc(desc, &gObjectA));
  ASSERT_ACL_OK(aclrtAllocatorSetAllocFuncToDesc(desc, allocA));
  ASSERT_ACL_OK(aclrtAllocatorSetFreeFuncToDesc(desc, freeBlock));
  ASSERT_ACL_OK(aclrtAllocatorSetAllocAdviseFuncToDesc(desc, allocAdvise));
  ASSERT_ACL_OK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, addressOf));
  ASSERT_ACL_OK(aclrtAllocatorDestroyDesc(desc));
  // Registration needs streams, hence aclInit.
  EXPECT_ACL_ERROR(aclrtAllocatorUnregister(reinterpret_cast<aclrtStream>(&gObjectA)),
                   ACL_ERROR_UNINITIALIZE, "called before aclInit");
}

TEST(AclAllocator, DescriptionErrors) {
  aclrtAllocatorDesc desc = aclrtAllocatorCreateDesc();
  ASSERT_NE(desc, nullptr);
  EXPECT_ACL_ERROR(aclrtAllocatorSetObjToDesc(nullptr, &gObjectA), ACL_ERROR_INVALID_PARAM,
                   "aclrtAllocatorSetObjToDesc: allocatorDesc is null");
  EXPECT_ACL_ERROR(aclrtAllocatorSetObjToDesc(desc, nullptr), ACL_ERROR_INVALID_PARAM,
                   "aclrtAllocatorSetObjToDesc: allocator is null");
  EXPECT_ACL_ERROR(aclrtAllocatorSetAllocFuncToDesc(desc, nullptr), ACL_ERROR_INVALID_PARAM,
                   "aclrtAllocatorSetAllocFuncToDesc: func is null");
  EXPECT_ACL_ERROR(aclrtAllocatorSetFreeFuncToDesc(desc, nullptr), ACL_ERROR_INVALID_PARAM,
                   "aclrtAllocatorSetFreeFuncToDesc: func is null");
  EXPECT_ACL_ERROR(aclrtAllocatorSetAllocAdviseFuncToDesc(desc, nullptr), ACL_ERROR_INVALID_PARAM,
                   "aclrtAllocatorSetAllocAdviseFuncToDesc: func is null");
  EXPECT_ACL_ERROR(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, nullptr),
                   ACL_ERROR_INVALID_PARAM,
                   "aclrtAllocatorSetGetAddrFromBlockFuncToDesc: func is null");
  EXPECT_ACL_ERROR(aclrtAllocatorDestroyDesc(nullptr), ACL_ERROR_INVALID_PARAM,
                   "allocatorDesc is null");
  ASSERT_ACL_OK(aclrtAllocatorDestroyDesc(desc));
  EXPECT_ACL_ERROR(aclrtAllocatorDestroyDesc(desc), ACL_ERROR_INVALID_PARAM,
                   "is not a live allocator description");
  EXPECT_ACL_ERROR(aclrtAllocatorSetAllocFuncToDesc(desc, allocA), ACL_ERROR_INVALID_PARAM,
                   "is not a live allocator description");
  int notADescription = 0;
  EXPECT_ACL_ERROR(aclrtAllocatorSetFreeFuncToDesc(&notADescription, freeBlock),
                   ACL_ERROR_INVALID_PARAM, "is not a live allocator description");
}

class AclAllocatorTest : public AclDevice0StreamTest {
 protected:
  void TearDown() override {
    EXPECT_EQ(gCalls.load(), 0);
    AclDevice0StreamTest::TearDown();
  }
};

TEST_F(AclAllocatorTest, RegistrationRoundTrip) {
  aclrtAllocatorDesc desc = completeDescription(&gObjectA, allocA);
  ASSERT_ACL_OK(aclrtAllocatorRegister(stream_, desc));
  aclrtAllocatorDesc gotDesc = nullptr;
  aclrtAllocator object = nullptr;
  aclrtAllocatorAllocFunc alloc = nullptr;
  aclrtAllocatorFreeFunc release = nullptr;
  aclrtAllocatorAllocAdviseFunc advise = allocAdvise;
  aclrtAllocatorGetAddrFromBlockFunc address = nullptr;
  ASSERT_ACL_OK(
      aclrtAllocatorGetByStream(stream_, &gotDesc, &object, &alloc, &release, &advise, &address));
  EXPECT_EQ(gotDesc, desc);
  EXPECT_EQ(object, &gObjectA);
  EXPECT_EQ(alloc, allocA);
  EXPECT_EQ(release, freeBlock);
  EXPECT_EQ(advise, nullptr);  // optional, never set
  EXPECT_EQ(address, addressOf);
  // Every output but the description may be NULL.
  gotDesc = nullptr;
  ASSERT_ACL_OK(
      aclrtAllocatorGetByStream(stream_, &gotDesc, nullptr, nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(gotDesc, desc);

  // The registration holds what the description held then.
  ASSERT_ACL_OK(aclrtAllocatorSetAllocFuncToDesc(desc, allocB));
  ASSERT_ACL_OK(aclrtAllocatorSetAllocAdviseFuncToDesc(desc, allocAdvise));
  ASSERT_ACL_OK(
      aclrtAllocatorGetByStream(stream_, &gotDesc, nullptr, &alloc, nullptr, &advise, nullptr));
  EXPECT_EQ(alloc, allocA);
  EXPECT_EQ(advise, nullptr);
  // Registering again replaces it.
  ASSERT_ACL_OK(aclrtAllocatorRegister(stream_, desc));
  ASSERT_ACL_OK(
      aclrtAllocatorGetByStream(stream_, &gotDesc, nullptr, &alloc, nullptr, &advise, nullptr));
  EXPECT_EQ(alloc, allocB);
  EXPECT_EQ(advise, allocAdvise);
  // Destroying the description leaves the registration.
  ASSERT_ACL_OK(aclrtAllocatorDestroyDesc(desc));
  ASSERT_ACL_OK(
      aclrtAllocatorGetByStream(stream_, &gotDesc, &object, &alloc, nullptr, nullptr, nullptr));
  EXPECT_EQ(gotDesc, desc);
  EXPECT_EQ(object, &gObjectA);
  EXPECT_EQ(alloc, allocB);

  ASSERT_ACL_OK(aclrtAllocatorUnregister(stream_));
  EXPECT_ACL_ERROR(
      aclrtAllocatorGetByStream(stream_, &gotDesc, nullptr, nullptr, nullptr, nullptr, nullptr),
      ACL_ERROR_INVALID_PARAM, "no allocator is registered on stream");
  ASSERT_ACL_OK(aclrtAllocatorUnregister(stream_));  // none registered: success
}

TEST_F(AclAllocatorTest, EachStreamHasItsOwn) {
  aclrtStream other = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&other));
  aclrtAllocatorDesc a = completeDescription(&gObjectA, allocA);
  aclrtAllocatorDesc b = completeDescription(&gObjectB, allocB);
  ASSERT_ACL_OK(aclrtAllocatorRegister(stream_, a));
  ASSERT_ACL_OK(aclrtAllocatorRegister(other, b));
  aclrtAllocatorDesc got = nullptr;
  aclrtAllocator object = nullptr;
  ASSERT_ACL_OK(
      aclrtAllocatorGetByStream(stream_, &got, &object, nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(got, a);
  EXPECT_EQ(object, &gObjectA);
  ASSERT_ACL_OK(
      aclrtAllocatorGetByStream(other, &got, &object, nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(got, b);
  EXPECT_EQ(object, &gObjectB);
  ASSERT_ACL_OK(aclrtAllocatorUnregister(other));
  ASSERT_ACL_OK(
      aclrtAllocatorGetByStream(stream_, &got, nullptr, nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(got, a);  // untouched
  // A destroyed stream has no allocator any more.
  ASSERT_ACL_OK(aclrtAllocatorRegister(other, b));
  ASSERT_ACL_OK(aclrtDestroyStream(other));
  EXPECT_ACL_ERROR(
      aclrtAllocatorGetByStream(other, &got, nullptr, nullptr, nullptr, nullptr, nullptr),
      ACL_ERROR_RT_INVALID_HANDLE, "is not a live stream");
  EXPECT_ACL_ERROR(aclrtAllocatorRegister(other, b), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live stream");
  // A new stream, perhaps at the destroyed one's address, has none either.
  ASSERT_ACL_OK(aclrtAllocatorRegister(stream_, a));
  ASSERT_ACL_OK(aclrtDestroyStream(stream_));
  ASSERT_ACL_OK(aclrtCreateStream(&stream_));
  EXPECT_ACL_ERROR(
      aclrtAllocatorGetByStream(stream_, &got, nullptr, nullptr, nullptr, nullptr, nullptr),
      ACL_ERROR_INVALID_PARAM, "no allocator is registered");
  ASSERT_ACL_OK(aclrtAllocatorDestroyDesc(a));
  ASSERT_ACL_OK(aclrtAllocatorDestroyDesc(b));
}

TEST_F(AclAllocatorTest, RegisterRequiresACompleteDescription) {
  aclrtAllocatorDesc desc = aclrtAllocatorCreateDesc();
  ASSERT_NE(desc, nullptr);
  EXPECT_ACL_ERROR(aclrtAllocatorRegister(stream_, desc), ACL_ERROR_INVALID_PARAM,
                   "allocatorDesc's allocator (aclrtAllocatorSetObjToDesc) is not set");
  ASSERT_ACL_OK(aclrtAllocatorSetObjToDesc(desc, &gObjectA));
  EXPECT_ACL_ERROR(aclrtAllocatorRegister(stream_, desc), ACL_ERROR_INVALID_PARAM,
                   "allocatorDesc's alloc function (aclrtAllocatorSetAllocFuncToDesc) is not set");
  ASSERT_ACL_OK(aclrtAllocatorSetAllocFuncToDesc(desc, allocA));
  EXPECT_ACL_ERROR(aclrtAllocatorRegister(stream_, desc), ACL_ERROR_INVALID_PARAM,
                   "allocatorDesc's free function (aclrtAllocatorSetFreeFuncToDesc) is not set");
  ASSERT_ACL_OK(aclrtAllocatorSetFreeFuncToDesc(desc, freeBlock));
  EXPECT_ACL_ERROR(aclrtAllocatorRegister(stream_, desc), ACL_ERROR_INVALID_PARAM,
                   "allocatorDesc's get-address function "
                   "(aclrtAllocatorSetGetAddrFromBlockFuncToDesc) is not set");
  aclrtAllocatorDesc got = nullptr;
  EXPECT_ACL_ERROR(
      aclrtAllocatorGetByStream(stream_, &got, nullptr, nullptr, nullptr, nullptr, nullptr),
      ACL_ERROR_INVALID_PARAM, "no allocator is registered");  // nothing was registered
  ASSERT_ACL_OK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, addressOf));
  ASSERT_ACL_OK(aclrtAllocatorRegister(stream_, desc));
  ASSERT_ACL_OK(aclrtAllocatorUnregister(stream_));
  ASSERT_ACL_OK(aclrtAllocatorDestroyDesc(desc));
}

TEST_F(AclAllocatorTest, RegistrationErrors) {
  aclrtAllocatorDesc desc = completeDescription(&gObjectA, allocA);
  aclrtAllocatorDesc got = nullptr;
  EXPECT_ACL_ERROR(aclrtAllocatorRegister(nullptr, desc), ACL_ERROR_INVALID_PARAM,
                   "aclrtAllocatorRegister: stream is null");
  EXPECT_ACL_ERROR(aclrtAllocatorRegister(stream_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "aclrtAllocatorRegister: allocatorDesc is null");
  int fake = 0;
  EXPECT_ACL_ERROR(aclrtAllocatorRegister(stream_, &fake), ACL_ERROR_INVALID_PARAM,
                   "is not a live allocator description");
  EXPECT_ACL_ERROR(aclrtAllocatorRegister(&fake, desc), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live stream");
  EXPECT_ACL_ERROR(
      aclrtAllocatorGetByStream(nullptr, &got, nullptr, nullptr, nullptr, nullptr, nullptr),
      ACL_ERROR_INVALID_PARAM, "aclrtAllocatorGetByStream: stream is null");
  EXPECT_ACL_ERROR(
      aclrtAllocatorGetByStream(stream_, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
      ACL_ERROR_INVALID_PARAM, "aclrtAllocatorGetByStream: allocatorDesc is null");
  EXPECT_ACL_ERROR(aclrtAllocatorUnregister(nullptr), ACL_ERROR_INVALID_PARAM,
                   "aclrtAllocatorUnregister: stream is null");
  ASSERT_ACL_OK(aclrtAllocatorDestroyDesc(desc));
}

}  // namespace
}  // namespace cohort::acltest
